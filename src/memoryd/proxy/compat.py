"""OmniRoute's REST surface: ``/api/memory`` and ``/api/settings/memory``.

A client or dashboard written for OmniRoute's memory API works against
memoryd as it is; what it reads and writes are memoryd's memories of the
calling key's tenant (see :mod:`memoryd.omniroute` for the mapping).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Request

from memoryd import omniroute as memory_api
from memoryd.errors import ValidationError
from memoryd.proxy.summarize import summarize
from memoryd.web.deps import Caller, ok
from memoryd.web.errors import ERROR_RESPONSES, CompactJSON
from memoryd.web.guard import tenant_of

router = APIRouter(tags=["omniroute compatibility"], responses=ERROR_RESPONSES)
JsonBody = Annotated[dict[str, Any], Body()]


@router.get("/api/settings/memory", response_model=dict[str, Any])
def get_settings(request: Request, svc: Caller) -> CompactJSON:
    """The tenant's memory settings (upstream keys masked)."""
    return ok(request.app.state.proxy.settings.get(tenant_of(request.state).id).public())


@router.put("/api/settings/memory", response_model=dict[str, Any])
def put_settings(request: Request, svc: Caller, body: JsonBody) -> CompactJSON:
    """Change some of the settings; the rest stay. Applies to the next request."""
    settings = request.app.state.proxy.settings.update(tenant_of(request.state).id, body)
    return ok(settings.public())


@router.get("/api/memory", response_model=dict[str, Any])
def list_memory(
    svc: Caller,
    type: str | None = None,
    sessionId: str | None = None,
    q: str | None = None,
    limit: int = memory_api.DEFAULT_LIMIT,
    page: int = 1,
    offset: int | None = None,
) -> CompactJSON:
    """A page of memories, filtered, with ``stats.total`` and ``stats.byType``."""
    return ok(
        memory_api.list_entries(
            svc, memory_type=type, session_id=sessionId, q=q, limit=limit, page=page, offset=offset
        )
    )


@router.post("/api/memory", status_code=201, response_model=dict[str, Any])
def create_memory(svc: Caller, body: JsonBody) -> CompactJSON:
    """A memory; with a ``key``, it replaces the memory that held the key."""
    return ok(memory_api.create_entry(svc, body), 201)


@router.get("/api/memory/health", response_model=dict[str, Any])
def memory_health(svc: Caller) -> CompactJSON:
    """A create, list and delete round trip: ``{working, latencyMs, error?}``."""
    return ok(memory_api.health(svc))


@router.post("/api/memory/summarize", response_model=dict[str, Any])
def summarize_memory(svc: Caller, body: JsonBody | None = None) -> CompactJSON:
    """Condense the memories past a token budget; the originals stay in their history."""
    body = body or {}
    return ok(summarize(svc, body.get("sessionId"), body.get("maxTokens")))


@router.post("/api/memory/clear", response_model=dict[str, Any])
def clear_memory(svc: Caller, body: JsonBody) -> CompactJSON:
    """Delete the memories of a ``type``, older than ``olderThan``, or ``all``."""
    unknown = set(body) - {"type", "olderThan", "all"}
    if unknown:
        raise ValidationError(f"unknown fields: {', '.join(sorted(unknown))}")
    everything = body.get("all", False)
    if not isinstance(everything, bool):
        raise ValidationError("all must be true or false")
    return ok(memory_api.clear_entries(svc, body.get("type"), body.get("olderThan"), everything))


@router.get("/api/memory/{memory_id}", response_model=dict[str, Any])
def get_memory(svc: Caller, memory_id: str) -> CompactJSON:
    return ok(memory_api.get_entry(svc, memory_id))


@router.delete("/api/memory/{memory_id}", response_model=dict[str, Any])
def delete_memory(svc: Caller, memory_id: str) -> CompactJSON:
    return ok(memory_api.delete_entry(svc, memory_id))
