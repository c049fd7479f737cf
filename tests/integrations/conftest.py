"""Fixtures for the TypeScript host plugins: the built plugins and a real memoryd server.

The plugins are built once per run (``build_plugins.build``: npm ci when the
lock changed, then tsc). The server is the app ``memoryd serve`` runs, on a
free loopback port (uvicorn in a thread of the test process, sharing the
loaded model: ``server_harness.start_server``); the hosts reach it over HTTP
like any client, with a tenant's key.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "server"))
sys.path.insert(0, str(HERE.parent / "llm"))

from build_plugins import build  # noqa: E402
from server_harness import create_tenant, start_server  # noqa: E402

from memoryd.embed.local import LocalEmbedder  # noqa: E402


@pytest.fixture(scope="session")
def plugins_built() -> None:
    build()


@dataclass
class Memoryd:
    url: str
    key: str
    http: httpx.Client
    stop: Callable[[], None]


@pytest.fixture(scope="module")
def memoryd(tmp_path_factory: pytest.TempPathFactory, embedder: LocalEmbedder) -> Iterator[Memoryd]:
    """A memoryd server on a loopback port, and a tenant made through its API."""
    server, stop = start_server(tmp_path_factory.mktemp("memoryd") / "home", embedder)
    stopped = False

    def stop_once() -> None:
        nonlocal stopped
        if not stopped:
            stopped = True
            stop()

    try:
        _, key = create_tenant(server, "plugins")
        with server.client(key) as http:
            yield Memoryd(server.url, key, http, stop_once)
    finally:
        stop_once()
