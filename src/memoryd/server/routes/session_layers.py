"""Layered session memory: the sessions' summary layers, and consolidation on demand.

A thin door over ``memoryd.continuity.layers.SessionLayers``. With
``X-Agent-Id`` a request sees that agent's sessions only. The server also
consolidates by itself (``session_consolidate_interval_min``); the POST is
for a host that wants it now (a session that just ended).
"""

from __future__ import annotations

from fastapi import APIRouter
from pydantic import Field

from memoryd.continuity.layers import SessionLayers
from memoryd.models import wire
from memoryd.server.responses import ERROR_RESPONSES, Consolidated, Layers
from memoryd.server.schemas import Body
from memoryd.web.deps import Caller, ok
from memoryd.web.errors import CompactJSON

router = APIRouter(tags=["checkpoints"], responses=ERROR_RESPONSES)


# ten years: longer means no session at all, and past it the cut-off time overflows
MAX_IDLE_S = 10 * 365 * 86_400


class Consolidate(Body):
    idle_s: float = Field(0.0, ge=0.0, le=MAX_IDLE_S)  # only sessions quiet for this long


@router.get("/v1/session-layers", response_model=Layers)
def session_layers(
    svc: Caller, agent_id: str | None = None, session_id: str | None = None
) -> CompactJSON:
    """D5 (exchanges), D2 (outline), D1 (gist), D0 (themes); newest session first."""
    found = SessionLayers(svc, llm=None).layers(agent_id, session_id)
    return ok({"layers": wire(found)})


@router.post("/v1/session-layers/consolidate", response_model=Consolidated)
def consolidate(body: Consolidate, svc: Caller) -> CompactJSON:
    """Condense every pending session now (D5 → D2 → D1 → D0, the LLM when configured)."""
    return ok({"consolidated": SessionLayers(svc).consolidate_pending(body.idle_s)})
