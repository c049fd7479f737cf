"""Fixtures: a real memoryd server (uvicorn on a loopback port) and tenants made through its API."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from server_harness import TenantClient, module_server
from server_harness import make_tenant as make_tenant

server = module_server("server")


@pytest.fixture
def alice(make_tenant: Callable[..., TenantClient]) -> TenantClient:
    return make_tenant("alice")


@pytest.fixture
def bob(make_tenant: Callable[..., TenantClient]) -> TenantClient:
    return make_tenant("bob")
