"""The dashboard's data pages: file imports (upload, progress, rollback) and the JSONL export.

An import runs as the API's does (a task the import worker takes); its page
polls itself every second while the task is processing, so the progress is
the task's own, written after each unit of work.
"""

from __future__ import annotations

import io
from datetime import UTC, datetime

from fastapi import APIRouter, Request
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from memoryd.dashboard.routes import Viewer, page, see_other
from memoryd.errors import ValidationError
from memoryd.imports.service import Imports
from memoryd.portability import export_jsonl
from memoryd.server.routes.imports import read_upload_form

router = APIRouter(include_in_schema=False)
STRATEGIES = ("auto", "atomic", "section", "document")


@router.get("/imports")
def imports(request: Request, svc: Viewer) -> Response:
    return page(
        request, "imports.html", imports=Imports(svc).list()["imports"], strategies=STRATEGIES
    )


@router.post("/imports")
async def upload(request: Request, svc: Viewer) -> Response:
    try:
        data, filename, fields = await read_upload_form(request)
        strategy = fields.get("strategy") or "auto"
        task = await run_in_threadpool(
            lambda: Imports(svc).create(data, filename, strategy=strategy)
        )
    except ValidationError as exc:
        listed = Imports(svc).list()["imports"]
        return page(
            request, "imports.html", 400, imports=listed, strategies=STRATEGIES, error=exc.message
        )
    return see_other(f"/imports/{task['id']}")


@router.get("/imports/{import_id}")
def import_page(request: Request, svc: Viewer, import_id: str) -> Response:
    task = Imports(svc).get(import_id)
    fragment = request.headers.get("HX-Request") == "true"
    return page(request, "_import.html" if fragment else "import.html", task=task)


@router.post("/imports/{import_id}/rollback")
def rollback(svc: Viewer, import_id: str) -> Response:
    imports = Imports(svc)
    task = imports.get(import_id)
    imports.rollback(task["id"])
    return see_other(f"/imports/{task['id']}")


@router.get("/export")
def export(svc: Viewer) -> Response:
    """Every memory of the signed-in tenant, with history and turns: ``memoryd import`` reads it."""
    out = io.StringIO()
    export_jsonl(svc, out)
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    return Response(
        out.getvalue(),
        media_type="application/x-ndjson",
        headers={"Content-Disposition": f'attachment; filename="memoryd-{stamp}.jsonl"'},
    )
