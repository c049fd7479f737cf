"""Fixtures: a real memoryd server (uvicorn on a loopback port) and tenants made through its API."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import httpx
import pytest
from server_harness import RunningServer, TenantClient, start_server

from memoryd.embed.local import LocalEmbedder


@pytest.fixture(scope="module")
def server(
    tmp_path_factory: pytest.TempPathFactory, embedder: LocalEmbedder
) -> Iterator[RunningServer]:
    """One server per test module; tests keep apart by using tenants of their own."""
    running, stop = start_server(tmp_path_factory.mktemp("server") / "home", embedder)
    yield running
    stop()


@pytest.fixture
def make_tenant(server: RunningServer) -> Iterator[Callable[..., TenantClient]]:
    """Create tenants through ``POST /v1/tenants``, each with an authenticated client."""
    made: list[httpx.Client] = []

    def make(name: str = "") -> TenantClient:
        with server.client() as anonymous:
            response = anonymous.post("/v1/tenants", json={"name": name})
        assert response.status_code == 200, response.text
        body = response.json()
        http = server.client(body["api_key"])
        made.append(http)
        return TenantClient(body["id"], body["api_key"], http)

    yield make
    for http in made:
        http.close()


@pytest.fixture
def alice(make_tenant: Callable[..., TenantClient]) -> TenantClient:
    return make_tenant("alice")


@pytest.fixture
def bob(make_tenant: Callable[..., TenantClient]) -> TenantClient:
    return make_tenant("bob")
