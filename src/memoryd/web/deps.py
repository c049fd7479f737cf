"""Route dependencies: the caller's service, and small helpers shared by the routers."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, Header, Request, Security
from fastapi.security import APIKeyHeader

from memoryd.models import Memory, Space, wire
from memoryd.service import MemoryService
from memoryd.web.errors import CompactJSON
from memoryd.web.guard import tenant_of

# declares the key in the OpenAPI document (securitySchemes), so /docs can send it; the
# Guard checks it before any route runs, so the value is not read here
API_KEY = APIKeyHeader(
    name="X-API-Key",
    scheme_name="ApiKey",
    description="A tenant's API key (memoryd serve prints one on its first start).",
    auto_error=False,
)


AgentHeader = Annotated[str | None, Header(alias="X-Agent-Id")]
SessionHeader = Annotated[str | None, Header(alias="X-Session-Id")]


def caller(
    request: Request,
    _key: Annotated[str | None, Security(API_KEY)] = None,
    x_agent_id: AgentHeader = None,
    x_session_id: SessionHeader = None,
) -> MemoryService:
    """The service as the authenticated tenant sees it; with ``X-Agent-Id`` (and
    ``X-Session-Id``), as that agent of the tenant, in that session: it sees and
    writes only its scopes (memoryd.store.scopes)."""
    root: MemoryService = request.app.state.service
    tenant = root.for_tenant(tenant_of(request.state).id)
    return tenant if not x_agent_id else tenant.for_agent(x_agent_id, x_session_id)


Caller = Annotated[MemoryService, Depends(caller)]


def ok(content: Any, status: int = 200) -> CompactJSON:
    return CompactJSON(content, status_code=status)


def memory_json(memory: Memory) -> dict[str, Any]:
    return memory.to_json()


def space_json(space: Space) -> dict[str, Any]:
    data: dict[str, Any] = wire(space)
    return data
