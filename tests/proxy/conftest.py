"""Fixtures: a memoryd server whose memory proxy forwards to a scripted upstream."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

TESTS = Path(__file__).parents[1]
for folder in ("server", "llm"):
    if str(TESTS / folder) not in sys.path:
        sys.path.insert(0, str(TESTS / folder))

from scripted_upstream import ScriptedUpstream  # noqa: E402
from server_harness import RunningServer, TenantClient, start_server  # noqa: E402
from server_harness import make_tenant as make_tenant  # noqa: E402

from memoryd.embed.local import LocalEmbedder  # noqa: E402

UPSTREAM_KEY = "upstream-secret"
WAIT_S = 30.0


@pytest.fixture(scope="module")
def upstream() -> Iterator[ScriptedUpstream]:
    with ScriptedUpstream() as server:
        yield server


@pytest.fixture(autouse=True)
def fresh_upstream(upstream: ScriptedUpstream) -> None:
    """Each test starts with no script left, no recorded request, the gate closed."""
    upstream.requests.clear()
    upstream._script.clear()
    upstream.gate.clear()
    upstream.stats.finished = 0
    upstream.stats.aborted.clear()


@pytest.fixture(scope="module")
def server(
    tmp_path_factory: pytest.TempPathFactory, embedder: LocalEmbedder, upstream: ScriptedUpstream
) -> Iterator[RunningServer]:
    running, stop = start_server(
        tmp_path_factory.mktemp("proxy") / "home",
        embedder,
        upstream_url=upstream.url,
        upstream_api_key=UPSTREAM_KEY,
        upstream_timeout_s=5.0,
    )
    yield running
    stop()


def wait_for(check: Callable[[], Any], what: str, timeout_s: float = WAIT_S) -> Any:
    """Poll until ``check`` returns something truthy (remembering runs after the answer)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if result := check():
            return result
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def contents(t: TenantClient, **params: Any) -> list[str]:
    """The content of every memory of the tenant (conversation turns with memory_type)."""
    response = t.http.get("/v1/memories", params={"limit": 1000, **params})
    assert response.status_code == 200, response.text
    return [m["content"] for m in response.json()["memories"]]
