"""Consolidation: merge duplicates and retire superseded facts, with history (202, a task)."""

from __future__ import annotations

from fastapi import APIRouter

from memoryd.models import wire
from memoryd.server.responses import ERROR_RESPONSES, Object
from memoryd.web.deps import Caller, ok
from memoryd.web.errors import CompactJSON

router = APIRouter(tags=["memories"], responses=ERROR_RESPONSES)


@router.post("/v1/consolidate", status_code=202, response_model=Object)
def consolidate(svc: Caller) -> CompactJSON:
    """Queue a consolidation of the caller's memories (or name the one already queued).

    Poll ``GET /v1/tasks/{id}`` for its result: memories checked, retired,
    and the reconciler's decisions. Nothing is deleted: every retired memory
    keeps its history and is found by ``as_of`` before the change.
    """
    task = wire(svc.consolidate())
    return ok({**task, "task_id": task["id"], "status_url": f"/v1/tasks/{task['id']}"}, 202)
