"""Health, tenants and API keys. Keys are shown once, when made; lists show their prefix."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from memoryd.models import ApiKey, wire
from memoryd.server.responses import (
    ERROR_RESPONSES,
    Health,
    KeyCreated,
    KeyList,
    TenantCreated,
)
from memoryd.server.schemas import KeyCreate, TenantCreate
from memoryd.tenancy.tenants import Tenants
from memoryd.web.deps import Caller, ok
from memoryd.web.errors import CompactJSON

router = APIRouter(tags=["tenants"], responses=ERROR_RESPONSES)


def _tenants(request: Request) -> Tenants:
    tenants: Tenants = request.app.state.tenants
    return tenants


def _key_json(key: ApiKey) -> dict[str, Any]:
    data: dict[str, Any] = wire(key)
    return data


@router.get("/health", response_model=Health, responses={503: {"model": Health}})
async def health(request: Request) -> CompactJSON:
    """``ok`` with sound storage; 503 once the database showed damage (and is read-only).

    Answered on the event loop, not in a worker thread: under load every worker
    thread is busy with searches, and a check queued behind them would report a
    working server as slow or down (``python -m bench server``: p95 at 32 clients
    43 ms with the thread, 25 ms without). The store's look is cheap enough for the
    loop: SQLite stats its file and reads the small ``meta`` table, a read that WAL
    never makes wait for a writer; PostgreSQL does nothing.
    """
    error = request.app.state.service.store.storage_problem()
    if error is None:
        return ok({"status": "ok", "storage": "ok"})
    storage = {
        "storage_damaged": "damaged",
        "storage_full": "full",
        "storage_read_only": "read_only",
    }.get(error.code, "failing")
    return ok(
        {
            "status": "degraded",
            "storage": storage,
            "error": {"code": error.code, "message": error.message},
        },
        503,
    )


@router.post("/v1/tenants", response_model=TenantCreated)
def create_tenant(request: Request, body: TenantCreate | None = None) -> CompactJSON:
    """A tenant, its personal space and its first key. ``api_key`` is shown only here."""
    tenant, secret = _tenants(request).create((body or TenantCreate()).name)
    return ok({"id": tenant.id, "api_key": secret, "status": tenant.status, "name": tenant.name})


@router.get("/v1/keys", response_model=KeyList)
def list_keys(request: Request, svc: Caller) -> CompactJSON:
    keys = _tenants(request).list_keys(svc.tenant_id)
    return ok({"keys": [_key_json(k) for k in keys]})


@router.post("/v1/keys", status_code=201, response_model=KeyCreated)
def create_key(request: Request, svc: Caller, body: KeyCreate | None = None) -> CompactJSON:
    key, secret = _tenants(request).create_key(svc.tenant_id, (body or KeyCreate()).name)
    return ok({**_key_json(key), "api_key": secret}, 201)


@router.delete("/v1/keys/{key_id}", response_model=ApiKey)
def revoke_key(request: Request, key_id: str, svc: Caller) -> CompactJSON:
    return ok(_key_json(_tenants(request).revoke_key(svc.tenant_id, key_id)))
