"""The eight stats endpoints (§4.12–4.13), over the caller's spaces only."""

from __future__ import annotations

from fastapi import APIRouter

from memoryd.server.responses import ERROR_RESPONSES, Object
from memoryd.stats import Stats
from memoryd.web.deps import Caller, ok
from memoryd.web.errors import CompactJSON

router = APIRouter(tags=["stats"], responses=ERROR_RESPONSES)


@router.get("/v1/stats", response_model=Object)
def overview(svc: Caller, days: int = 30, space: str | None = None) -> CompactJSON:
    return ok(_stats(svc).overview(space, days))


@router.get("/v1/stats/config", response_model=Object)
def config(svc: Caller) -> CompactJSON:
    return ok(Stats.config())


@router.get("/v1/stats/tags", response_model=Object)
def tags(svc: Caller, limit: int = 20, min_count: int = 1, space: str | None = None) -> CompactJSON:
    return ok(_stats(svc).tags(limit, min_count, space))


@router.get("/v1/stats/decay", response_model=Object)
def decay(svc: Caller, memory_id: str, points: int = 90) -> CompactJSON:
    return ok(_stats(svc).decay(memory_id, points))


@router.get("/v1/stats/relations", response_model=Object)
def relations(svc: Caller, limit: int = 100, min_importance: float = 0.0) -> CompactJSON:
    return ok(_stats(svc).relations(limit, min_importance))


@router.get("/v1/stats/spaces", response_model=Object)
def spaces(svc: Caller) -> CompactJSON:
    return ok(_stats(svc).spaces())


@router.get("/v1/stats/sharing", response_model=Object)
def sharing(svc: Caller, days: int = 30) -> CompactJSON:
    return ok(_stats(svc).sharing(days))


@router.get("/v1/stats/agents", response_model=Object)
def agents(svc: Caller) -> CompactJSON:
    return ok(_stats(svc).agents())


def _stats(svc: Caller) -> Stats:
    """The caller's figures: an agent (``X-Agent-Id``) counts only what it may see."""
    return Stats(svc.engine, svc.tenant_id, svc.viewer)
