"""Import tests run against real servers: the server harness and the scripted LLM are shared."""

from __future__ import annotations

import sys
from pathlib import Path

TESTS = Path(__file__).parents[1]
for folder in ("server", "llm"):
    if str(TESTS / folder) not in sys.path:
        sys.path.insert(0, str(TESTS / folder))


from collections.abc import Callable, Iterator  # noqa: E402

import pytest  # noqa: E402
from server_harness import RunningServer, TenantClient, start_server  # noqa: E402

from memoryd.embed.local import LocalEmbedder  # noqa: E402


@pytest.fixture(scope="module")
def server(
    tmp_path_factory: pytest.TempPathFactory, embedder: LocalEmbedder
) -> Iterator[RunningServer]:
    """An offline server (no LLM) per module; tests keep apart by tenants of their own."""
    running, stop = start_server(tmp_path_factory.mktemp("imports") / "home", embedder)
    yield running
    stop()


@pytest.fixture
def make_tenant(server: RunningServer) -> Iterator[Callable[[str], TenantClient]]:
    """Tenants made through ``POST /v1/tenants``, each with an authenticated client."""
    made: list[TenantClient] = []

    def make(name: str) -> TenantClient:
        with server.client() as anonymous:
            body = anonymous.post("/v1/tenants", json={"name": name}).json()
        made.append(TenantClient(body["id"], body["api_key"], server.client(body["api_key"])))
        return made[-1]

    yield make
    for t in made:
        t.http.close()


@pytest.fixture
def tenant(make_tenant: Callable[[str], TenantClient]) -> TenantClient:
    return make_tenant("importer")
