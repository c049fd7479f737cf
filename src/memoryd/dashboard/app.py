"""The dashboard mounted on the server's app: its pages, static files and error pages."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from starlette.responses import FileResponse
from starlette.staticfiles import StaticFiles

from memoryd.dashboard import conversations, data, routes, settings, spaces
from memoryd.dashboard.pages import STATIC, SignInRequired, page, see_other
from memoryd.errors import MemorydError, NotFoundError
from memoryd.web.session import is_dashboard_path


def install(app: FastAPI) -> None:
    """Add the pages and their static files to ``app``, after the API's error handlers.

    memoryd's errors on a dashboard path become an HTML page with the API's
    status and message (a malformed query string or form too: a 400 page);
    everywhere else the API's JSON handlers answer.
    """
    app.include_router(routes.router)
    app.include_router(conversations.router)
    app.include_router(settings.router)
    app.include_router(data.router)
    app.include_router(spaces.router)
    static = Path(__file__).with_name("static")
    icon = static / "favicon.svg"

    # what a browser asks of every site, without a key: the icon, not a 401 in its console
    @app.get("/favicon.ico", include_in_schema=False)
    def favicon() -> FileResponse:
        return FileResponse(icon, media_type="image/svg+xml")

    app.mount(STATIC, StaticFiles(directory=static), name="dashboard-static")
    json_handler = app.exception_handlers[MemorydError]
    json_validation = app.exception_handlers[RequestValidationError]

    def on_page(request: Request) -> bool:
        path = request.url.path
        return is_dashboard_path(path) and not path.startswith(STATIC)

    async def memoryd_error(request: Request, exc: Exception) -> Response:
        if not on_page(request):
            return await _maybe_await(json_handler(request, exc))
        assert isinstance(exc, MemorydError)
        name = "not_found.html" if isinstance(exc, NotFoundError) else "error.html"
        return page(request, name, status=exc.http_status, error=exc.message, code=exc.code)

    async def malformed(request: Request, exc: Exception) -> Response:
        if not on_page(request):
            return await _maybe_await(json_validation(request, exc))
        assert isinstance(exc, RequestValidationError)
        fields = ", ".join(str(e["loc"][-1]) for e in exc.errors())
        message = f"malformed request: check {fields}" if fields else "malformed request"
        return page(request, "error.html", status=400, error=message, code="validation_error")

    async def sign_in_required(request: Request, exc: Exception) -> Response:
        return see_other("/sign-in")

    app.add_exception_handler(MemorydError, memoryd_error)
    app.add_exception_handler(RequestValidationError, malformed)
    app.add_exception_handler(SignInRequired, sign_in_required)


async def _maybe_await(value: Any) -> Response:
    if hasattr(value, "__await__"):
        value = await value
    assert isinstance(value, Response)
    return value
