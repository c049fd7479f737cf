"""Fixtures for the real hosts: the built plugins, one memoryd server, a tenant per module."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
for folder in ("integrations", "server", "llm"):
    sys.path.insert(0, str(HERE.parent / folder))

from build_plugins import build  # noqa: E402
from hosts_harness import Tenant  # noqa: E402
from server_harness import RunningServer, create_tenant, start_server  # noqa: E402

from memoryd.embed.local import LocalEmbedder  # noqa: E402


@pytest.fixture(scope="session")
def hosts_built() -> None:
    """The plugins built and the host CLIs installed (npm's cache keeps it cheap)."""
    build()


@pytest.fixture(scope="session")
def host_server(
    tmp_path_factory: pytest.TempPathFactory, embedder: LocalEmbedder
) -> Iterator[RunningServer]:
    """One memoryd server for every host test, on a loopback port."""
    server, stop = start_server(tmp_path_factory.mktemp("hosts") / "home", embedder)
    try:
        yield server
    finally:
        stop()


@pytest.fixture(scope="module")
def tenant(host_server: RunningServer, request: pytest.FixtureRequest) -> Iterator[Tenant]:
    """A tenant of its own for each test module: one host never sees another's memories."""
    _, key = create_tenant(host_server, request.module.__name__.rsplit(".", 1)[-1])
    with host_server.client(key) as http:
        yield Tenant(host_server.url, key, http)
