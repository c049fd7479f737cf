"""Export and import of a tenant's personal space as JSON Lines (a memoryd addition).

The same format as ``memoryd export`` / ``memoryd import``, so a local store
can move to a server and back.
"""

from __future__ import annotations

import io

from fastapi import APIRouter, Request
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from memoryd.errors import ValidationError
from memoryd.portability import import_jsonl
from memoryd.server.responses import ERROR_RESPONSES, Object
from memoryd.web.deps import Caller, ok
from memoryd.web.errors import CompactJSON
from memoryd.web.export_stream import NDJSON, export_response

router = APIRouter(tags=["portability"], responses=ERROR_RESPONSES)


@router.get(
    "/v1/export",
    response_class=Response,
    responses={
        200: {
            "description": "JSON Lines: one memory or raw message a line",
            "content": {NDJSON: {"schema": {"type": "string"}}},
        }
    },
)
def export(svc: Caller) -> Response:
    """Every memory (any state) and every raw message of the personal space, streamed."""
    return export_response(svc)


@router.post(
    "/v1/import",
    openapi_extra={
        "requestBody": {"content": {NDJSON: {"schema": {"type": "string"}}}, "required": True}
    },
    response_model=Object,
)
async def import_(request: Request, svc: Caller) -> CompactJSON:
    """Load an export; ids already here are skipped. A bad line imports nothing."""
    raw = await request.body()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ValidationError("the import body is not UTF-8 text") from None
    return ok(await run_in_threadpool(import_jsonl, svc, io.StringIO(text)))
