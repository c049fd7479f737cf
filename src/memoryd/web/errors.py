"""Every failure leaves the server as ``{"error": {"code", "message"}}``, never a stack trace.

Status codes follow the wire contract (reference §1.2–1.3): 400 for a body
that is not JSON or a bad query string, 422 for JSON of the wrong shape,
415 for a body that is not JSON at all, 404 / 405 for unknown routes.
"""

from __future__ import annotations

import errno
import json
import logging
from collections.abc import Callable
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import JSONResponse, Response

from memoryd.errors import MemorydError, StorageFullError, StorageReadOnlyError

log = logging.getLogger("memoryd.server")

HTTP_CODES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    408: "request_timeout",
    413: "payload_too_large",
    415: "unsupported_media_type",
    422: "validation_error",
}


class ErrorDetail(BaseModel):
    code: str = Field(description="stable, for programs: validation_error, not_found, …")
    message: str = Field(description="for people")


class ErrorBody(BaseModel):
    """Every error of the API: ``{"error": {"code", "message"}}``."""

    error: ErrorDetail


_ERROR_STATUSES = {
    400: "the request is malformed or a value is invalid",
    401: "no key, or a key that is unknown or revoked",
    403: "the key's tenant may not do this",
    404: "no such record, or not visible to this key",
    409: "in conflict with what is stored",
    413: "a body or file over its size limit",
    422: "a body of the wrong shape",
    500: "the server failed (its log says why)",
    503: "the database is damaged or read-only",
    507: "the disk is full",
}
# the error answers every router declares
ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorBody, "description": text} for status, text in _ERROR_STATUSES.items()
}


class CompactJSON(JSONResponse):
    """Compact separators and ``id`` first, as the ourmem clients parse it."""

    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        # backslashreplace writes a lone surrogate as its JSON escape, so the output stays JSON
        return json.dumps(
            content, ensure_ascii=False, separators=(",", ":"), allow_nan=False
        ).encode("utf-8", errors="backslashreplace")


def error_response(status: int, code: str, message: str) -> CompactJSON:
    return CompactJSON({"error": {"code": code, "message": message}}, status_code=status)


# (status, code, message) -> the error as an API writes it
ErrorFormat = Callable[[int, str, str], Response]


def _render(request: Request) -> ErrorFormat:
    """memoryd's error format, or that of the API a path speaks (``app.state.foreign_api``)."""
    foreign = getattr(request.app.state, "foreign_api", None)
    render = foreign(request.url.path, request.headers) if foreign is not None else None
    return render or error_response


def _where(loc: tuple[Any, ...]) -> str:
    return ".".join(str(p) for p in loc if p != "body") or "body"


def _validation(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, RequestValidationError)
    errors = exc.errors()
    if any(e.get("type") == "json_invalid" for e in errors):
        return error_response(
            400, "bad_request", "the request body is not valid JSON: " + errors[0].get("msg", "")
        )
    problems = "; ".join(f"{_where(tuple(e.get('loc', ())))}: {e.get('msg')}" for e in errors)
    in_query = any(e.get("loc", ("",))[0] in ("query", "path", "header") for e in errors)
    if in_query:
        return error_response(400, "validation_error", f"validation error: {problems}")
    return error_response(422, "validation_error", f"validation error: {problems}")


def _memoryd(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, MemorydError)
    if exc.http_status == 500:
        # the detail names files and internals: it goes to the log, not to the client
        log.error("%s %s failed: %s", request.method, request.url.path, exc.message)
        return error_response(500, exc.code, f"{exc.prefix}: the server failed; see its log")
    return error_response(exc.http_status, exc.code, exc.message)


def _http(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, StarletteHTTPException)
    status = exc.status_code
    detail = exc.detail if isinstance(exc.detail, str) else str(exc.detail)
    if status == 404 and detail == "Not Found":
        detail = f"no route {request.method} {request.url.path}"
    response = _render(request)(status, HTTP_CODES.get(status, "http_error"), detail)
    for name, value in (exc.headers or {}).items():
        response.headers[name] = value
    return response


def _os_error(request: Request, exc: Exception) -> Response:
    """The machine's refusal to write (a full disk, a read-only file system), wherever it
    came from (an upload spooled to a temporary file, an export, a backup): the client's
    clear answer, not a 500."""
    assert isinstance(exc, OSError)
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        failure: MemorydError = StorageFullError(
            f"no space left on the server's disk: this request did not happen ({exc.strerror})"
        )
    elif exc.errno == errno.EROFS:
        failure = StorageReadOnlyError(f"the server's file system is read-only ({exc.strerror})")
    else:
        return _unexpected(request, exc)
    log.error("%s %s failed: %s", request.method, request.url.path, exc)
    return _render(request)(failure.http_status, failure.code, failure.message)


def _unexpected(request: Request, exc: Exception) -> Response:
    log.exception("%s %s failed", request.method, request.url.path)
    response = _render(request)(
        500, "internal_error", "internal error: the server failed; see its log"
    )
    # the server drops this connection after an unhandled error: said so, a client opens a
    # new one for its next request instead of sending it into a closed socket
    response.headers["connection"] = "close"
    return response


def install(app: FastAPI) -> None:
    app.add_exception_handler(RequestValidationError, _validation)
    app.add_exception_handler(MemorydError, _memoryd)
    app.add_exception_handler(StarletteHTTPException, _http)
    app.add_exception_handler(OSError, _os_error)
    app.add_exception_handler(Exception, _unexpected)
