"""Route dependencies: the caller's service, and small helpers shared by the routers."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, Header, Request, Security
from fastapi.security import APIKeyHeader

from memoryd.models import Memory, Space, wire
from memoryd.server.errors import CompactJSON
from memoryd.server.guard import tenant_of
from memoryd.service import MemoryService

# declares the key in the OpenAPI document (securitySchemes), so /docs can send it; the
# Guard checks it before any route runs, so the value is not read here
API_KEY = APIKeyHeader(
    name="X-API-Key",
    scheme_name="ApiKey",
    description="A tenant's API key (memoryd serve prints one on its first start).",
    auto_error=False,
)


def caller(
    request: Request, _key: Annotated[str | None, Security(API_KEY)] = None
) -> MemoryService:
    """The service as the authenticated tenant sees it."""
    root: MemoryService = request.app.state.service
    return root.for_tenant(tenant_of(request.state).id)


Caller = Annotated[MemoryService, Depends(caller)]
AgentHeader = Annotated[str | None, Header(alias="X-Agent-Id")]


def ok(content: Any, status: int = 200) -> CompactJSON:
    return CompactJSON(content, status_code=status)


def memory_json(memory: Memory) -> dict[str, Any]:
    return memory.to_json()


def space_json(space: Space) -> dict[str, Any]:
    data: dict[str, Any] = wire(space)
    return data
