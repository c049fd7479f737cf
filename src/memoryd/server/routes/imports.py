"""File upload and import (reference §4.14-4.15): multipart in, ImportTask out.

The form is read by Starlette's multipart parser (the upload spools to a
temporary file, not to memory); the service checks everything else. Text
fields follow the reference: booleans as ``true``/``1``/``false``/``0``.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from starlette.concurrency import run_in_threadpool

from memoryd.imports.service import DEFAULT_LIST_LIMIT, Imports
from memoryd.server.responses import ERROR_RESPONSES, Object
from memoryd.web.deps import Caller, ok
from memoryd.web.errors import CompactJSON
from memoryd.web.uploads import flag, read_upload_form

router = APIRouter(tags=["imports"], responses=ERROR_RESPONSES)


@router.post("/v1/files", status_code=202, response_model=Object)
async def upload_file(request: Request, svc: Caller) -> CompactJSON:
    """Store a file's chunks as memories, tagged ``file:<name>`` (no extraction)."""
    data, filename, _ = await read_upload_form(request)
    result = await run_in_threadpool(Imports(svc).upload_file, data, filename)
    return ok(result, 202)


@router.post("/v1/imports", response_model=Object)
async def create_import(request: Request, svc: Caller) -> CompactJSON:
    """Queue an import; poll ``GET /v1/imports/{id}`` until completed or failed."""
    data, filename, f = await read_upload_form(request)
    options: dict[str, Any] = {
        "file_type": f.get("file_type") or "memory",
        "strategy": f.get("strategy") or "auto",
        "post_process": flag(f.get("post_process"), "post_process", True),
        "force": flag(f.get("force"), "force", False),
        "agent_id": f.get("agent_id") or None,
        "space_id": f.get("space_id") or None,
    }
    task = await run_in_threadpool(lambda: Imports(svc).create(data, filename, **options))
    return ok(task)


@router.get("/v1/imports", response_model=Object)
def list_imports(
    svc: Caller, limit: Annotated[int, Query(ge=1, le=1000)] = DEFAULT_LIST_LIMIT
) -> CompactJSON:
    return ok(Imports(svc).list(limit))


@router.post("/v1/imports/cross-reconcile", response_model=Object)
def cross_reconcile(svc: Caller) -> CompactJSON:
    """``supports`` relations between memories with cosine >= 0.85."""
    return ok(Imports(svc).cross_reconcile())


@router.get("/v1/imports/{import_id}", response_model=Object)
def get_import(import_id: str, svc: Caller) -> CompactJSON:
    return ok(Imports(svc).get(import_id))


@router.post("/v1/imports/{import_id}/intelligence", response_model=Object)
def rerun_intelligence(import_id: str, svc: Caller) -> CompactJSON:
    """Extract again from the stored text, replacing the previous run's memories."""
    return ok(Imports(svc).rerun(import_id))


@router.post("/v1/imports/{import_id}/rollback", response_model=Object)
def rollback_import(import_id: str, svc: Caller) -> CompactJSON:
    """Delete what the import created and restore what it changed."""
    return ok(Imports(svc).rollback(import_id))
