"""Route dependencies: the caller's service, and small helpers shared by the routers."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, Header, Request

from memoryd.models import Memory, Space, wire
from memoryd.server.errors import CompactJSON
from memoryd.server.guard import tenant_of
from memoryd.service import MemoryService


def caller(request: Request) -> MemoryService:
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
