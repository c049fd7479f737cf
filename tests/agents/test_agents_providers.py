"""Providers: the remote one against a real ``memoryd serve``, the registry, entry points."""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from agent_loop import COFFEE_QUESTION, PREFERENCE, PREFERENCE_WORDS, check_loop
from server_harness import free_port, spawn_server, stop_process

from memoryd.agents import (
    ENTRY_POINT_GROUP,
    MemoryManager,
    MemoryProvider,
    ProviderUnavailableError,
    UnknownProviderError,
    available_providers,
    register_provider,
    unregister_provider,
)
from memoryd.agents.providers.local import LocalProvider

Make = Callable[..., MemoryManager]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``memoryd serve`` as a real process on a loopback port; its URL."""
    process, url = spawn_server(tmp_path_factory.mktemp("agents-serve") / "home")
    yield url
    stop_process(process)


def remote_profile(home: Path, name: str, url: str) -> None:
    """A profile whose memory is a tenant of its own on the server (its settings.json)."""
    response = httpx.post(f"{url}/v1/tenants", json={"name": name}, timeout=30)
    assert response.status_code == 200, response.text
    folder = home / "profiles" / name
    folder.mkdir(parents=True, exist_ok=True)
    options = {"url": url, "api_key": response.json()["api_key"]}
    (folder / "settings.json").write_text(
        json.dumps({"memory": {"provider": "remote", "options": options}})
    )


def test_the_same_loop_runs_on_the_remote_provider(managers: Make, home: Path, served: str) -> None:
    remote_profile(home, "alice", served)
    check_loop(managers, "alice")


def test_remote_profiles_never_see_each_other(managers: Make, home: Path, served: str) -> None:
    remote_profile(home, "carol", served)
    remote_profile(home, "dave", served)
    carol, dave = managers("carol"), managers("dave")
    assert carol.settings.provider == dave.settings.provider == "remote"
    carol.remember(PREFERENCE)
    assert PREFERENCE_WORDS in carol.prefetch(COFFEE_QUESTION)
    assert dave.prefetch(COFFEE_QUESTION) == ""
    assert dave.search("dark roast coffee", 5) == []


def test_an_unreachable_server_gives_an_empty_block_and_says_why(
    managers: Make, caplog: pytest.LogCaptureFixture
) -> None:
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    manager = managers(provider="remote", options={"url": url, "timeout_s": 2})
    with caplog.at_level(logging.WARNING, logger="memoryd.agents"):
        assert manager.prefetch(COFFEE_QUESTION) == ""
        manager.on_turn_complete(PREFERENCE, "Noted.")
    assert "prefetch from provider 'remote' failed" in caplog.text
    assert "cannot reach" in caplog.text
    with pytest.raises(Exception, match="could not be stored"):
        manager.shutdown()


def test_remote_options_are_checked(managers: Make) -> None:
    with pytest.raises(Exception, match="unknown option"):
        managers(provider="remote", options={"adress": "http://127.0.0.1:1"})


def test_an_unknown_provider_lists_the_registered_ones(managers: Make) -> None:
    with pytest.raises(UnknownProviderError) as raised:
        managers(provider="memz")
    assert "no memory provider named 'memz'" in raised.value.message
    assert "local" in raised.value.message and "remote" in raised.value.message
    assert raised.value.code == "unknown_provider"


class NeedsAPackage(LocalProvider):
    name = "needs-package"
    requires = ("memoryd_no_such_package",)
    extra = "nosuch"


def test_a_provider_whose_package_is_missing_names_the_extra(managers: Make) -> None:
    register_provider("needs-package", NeedsAPackage)
    try:
        with pytest.raises(ProviderUnavailableError) as raised:
            managers(provider="needs-package")
        assert "memoryd_no_such_package" in raised.value.message
        assert "pip install 'memoryd[nosuch]'" in raised.value.message
    finally:
        unregister_provider("needs-package")


def test_register_provider_checks_what_it_is_given() -> None:
    with pytest.raises(Exception, match="MemoryProvider subclass"):
        register_provider("bad", dict)  # type: ignore[arg-type]


PLUGIN = '''
from memoryd.agents.providers.local import LocalProvider


class PluginProvider(LocalProvider):
    """A third party's provider: memoryd's local one under another name."""

    name = "plugin-store"
'''


@pytest.fixture
def installed_plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A distribution on sys.path that declares a provider in the entry-point group."""
    site = tmp_path / "site"
    (site / "memoryd_plugin_demo").mkdir(parents=True)
    (site / "memoryd_plugin_demo" / "__init__.py").write_text(PLUGIN)
    info = site / "memoryd_plugin_demo-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: memoryd-plugin-demo\n")
    (info / "entry_points.txt").write_text(
        f"[{ENTRY_POINT_GROUP}]\nplugin-store = memoryd_plugin_demo:PluginProvider\n"
    )
    monkeypatch.syspath_prepend(str(site))
    yield "plugin-store"
    sys.modules.pop("memoryd_plugin_demo", None)


def test_a_provider_from_an_entry_point_is_found_by_name(
    managers: Make, installed_plugin: str
) -> None:
    assert installed_plugin in available_providers()
    manager = managers(provider=installed_plugin)
    assert isinstance(manager.provider, MemoryProvider)
    assert type(manager.provider).__name__ == "PluginProvider"
    manager.remember(PREFERENCE)
    assert PREFERENCE_WORDS in manager.prefetch(COFFEE_QUESTION)
