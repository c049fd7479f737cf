"""The dashboard's data pages: imports (upload, progress, rollback), the JSONL export, stats.

An import runs as the API's does (a task the import worker takes); its page
polls itself every second while the task is processing, so the progress is
the task's own, written after each unit of work.
"""

from __future__ import annotations

import io
import time
from datetime import UTC, datetime

from fastapi import APIRouter, Depends, Request
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from memoryd.dashboard import charts
from memoryd.dashboard.protect import check_form
from memoryd.dashboard.routes import Viewer, page, see_other
from memoryd.errors import MemorydError, ValidationError
from memoryd.imports.service import Imports
from memoryd.portability import import_jsonl
from memoryd.server.export_stream import export_response
from memoryd.server.routes.imports import read_upload_form

router = APIRouter(include_in_schema=False, dependencies=[Depends(check_form)])
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
    return export_response(svc, download=True)


@router.get("/stats")
def stats_page(request: Request, svc: Viewer) -> Response:
    """Cards, memories added per day (30 days, by type), by category and by tier."""
    overview = svc.stats()
    return page(
        request,
        "stats.html",
        stats=overview,
        chart=charts.daily(overview["timeline"], 30, datetime.now(UTC).date()),
        by_category=charts.shares(overview["by_category"]),
        by_tier=charts.shares(overview["by_tier"]),
    )


@router.get("/stats/health")
def health(request: Request, svc: Viewer) -> Response:
    """A real round trip: a search through the whole pipeline (model, indexes, stages)."""
    started = time.perf_counter()
    try:
        svc.search("health check", limit=1, touch=False)
    except MemorydError as exc:
        return page(request, "_health.html", ok=False, error=exc.message)
    elapsed = (time.perf_counter() - started) * 1000
    return page(request, "_health.html", ok=True, ms=round(elapsed, 1))


@router.post("/imports/jsonl")
async def load_export(request: Request, svc: Viewer) -> Response:
    """Load a ``memoryd export`` file: validated whole first, so a bad line loads nothing."""
    try:
        data, _, _ = await read_upload_form(request)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise ValidationError("the export is not UTF-8 text") from None
        loaded = await run_in_threadpool(import_jsonl, svc, io.StringIO(text))
    except ValidationError as exc:
        listed = Imports(svc).list()["imports"]
        return page(
            request, "imports.html", 400, imports=listed, strategies=STRATEGIES, error=exc.message
        )
    listed = Imports(svc).list()["imports"]
    return page(request, "imports.html", imports=listed, strategies=STRATEGIES, loaded=loaded)
