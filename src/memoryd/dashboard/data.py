"""The dashboard's data pages: imports (upload, progress, resume, rollback), the JSONL
export, stats.

An import runs as the API's does (a task the import worker takes); its page
polls itself every second while the task is processing, so the progress is
the task's own, written after each unit of work. An import stopped half-way
(its server or command was stopped: ``interrupted``) is offered what the
command line offers: resume it (it runs again from the start) or roll it back.
"""

from __future__ import annotations

import io
import time
from datetime import UTC, datetime
from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from memoryd.dashboard import charts
from memoryd.dashboard.pages import Viewer, page, see_other
from memoryd.dashboard.protect import check_form
from memoryd.errors import MemorydError, ValidationError
from memoryd.imports.runner import INTERRUPTED
from memoryd.imports.service import Imports
from memoryd.portability import import_jsonl
from memoryd.service import MemoryService
from memoryd.web.export_stream import export_response
from memoryd.web.uploads import read_upload_form

router = APIRouter(include_in_schema=False, dependencies=[Depends(check_form)])
STRATEGIES = ("auto", "atomic", "section", "document")
# an import's status as a person reads it (the others are words already)
STATUS_WORDS = {"rolled_back": "rolled back"}


def progress(task: dict[str, Any]) -> dict[str, Any] | None:
    """An import's bar: ``value`` of ``max`` (no ``value``: under way, size not yet known)
    and what it says; None when a bar would say nothing (failed, rolled back).

    A finished import reads complete whatever its counters hold (a file with
    nothing to extract counts 0 of 0); a stopped one shows what it kept, which
    is what its counters say once its partial work was rolled back.
    """
    done, total = task["extraction_progress"] or 0, task["extraction_chunks"] or 0
    status = task["status"]
    if status == "completed":
        return {"value": 1, "max": 1, "label": "done"}
    if status == "processing":
        if not total:
            return {"value": None, "max": 1, "label": "starting"}
        return {"value": done, "max": total, "label": f"{done} of {total}"}
    if status == INTERRUPTED:
        return {"value": done, "max": max(total, 1), "label": f"stopped, {done} of {total} kept"}
    return None


def _imports_page(
    request: Request, svc: MemoryService, status: int = 200, **extra: Any
) -> Response:
    listed = [{**t, "bar": progress(t)} for t in Imports(svc).list()["imports"]]
    return page(
        request,
        "imports.html",
        status,
        imports=listed,
        strategies=STRATEGIES,
        status_words=STATUS_WORDS,
        **extra,
    )


@router.get("/imports")
def imports(request: Request, svc: Viewer) -> Response:
    return _imports_page(request, svc)


@router.post("/imports")
async def upload(request: Request, svc: Viewer) -> Response:
    try:
        data, filename, fields = await read_upload_form(request)
        strategy = fields.get("strategy") or "auto"
        task = await run_in_threadpool(
            lambda: Imports(svc).create(data, filename, strategy=strategy)
        )
    except ValidationError as exc:
        return _imports_page(request, svc, 400, error=exc.message)
    return see_other(f"/imports/{task['id']}")


@router.get("/imports/{import_id}")
def import_page(request: Request, svc: Viewer, import_id: str) -> Response:
    task = Imports(svc).get(import_id)
    fragment = request.headers.get("HX-Request") == "true"
    return page(
        request,
        "_import.html" if fragment else "import.html",
        task=task,
        bar=progress(task),
        status_words=STATUS_WORDS,
        interrupted=INTERRUPTED,
    )


@router.post("/imports/{import_id}/resume")
def resume(svc: Viewer, import_id: str) -> Response:
    """Run a stopped import again (from the start: its partial work was rolled back)."""
    task = Imports(svc).resume(import_id)
    return see_other(f"/imports/{task['id']}")


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
        return _imports_page(request, svc, 400, error=exc.message)
    return _imports_page(request, svc, loaded=loaded)
