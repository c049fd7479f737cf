"""The FastAPI application: the ourmem-compatible REST API over one ``MemoryService``.

``create_app`` builds it for a home and a bind address; ``app_from_env`` is
the factory uvicorn's workers call, configured by the ``MEMORYD_SERVE_*``
variables that ``memoryd serve`` sets.
"""

from __future__ import annotations

import gc
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import FastAPI, Request, Response
from fastapi.middleware.cors import CORSMiddleware
from fastapi_offline import FastAPIOffline
from starlette.datastructures import Headers

from memoryd import __version__, dashboard
from memoryd.config import Settings, load_settings
from memoryd.continuity.worker import SessionWorker
from memoryd.dashboard.protect import SecurityHeaders
from memoryd.errors import UnauthorizedError
from memoryd.imports.service import start_import_worker
from memoryd.ingest.consolidate import Schedule, start_consolidation_worker
from memoryd.proxy import compat
from memoryd.proxy import routes as proxy_routes
from memoryd.proxy.forward import Proxy, dialect_for
from memoryd.server.metrics import CONTENT_TYPE as METRICS_TYPE
from memoryd.server.metrics import Observed, ServerMetrics, is_admin
from memoryd.server.routes import (
    agent_tasks,
    checkpoints,
    consolidate,
    context,
    hosts,
    imports,
    memories,
    portability,
    session_layers,
    spaces,
    stats,
    tenants,
)
from memoryd.service import LOCAL_TENANT, MemoryService
from memoryd.tenancy.tenants import Tenants
from memoryd.web import errors
from memoryd.web.browser import BrowserGuard, BrowserPolicy
from memoryd.web.errors import CompactJSON, ErrorFormat
from memoryd.web.guard import DOCS_ASSETS, Guard, GuardOptions
from memoryd.web.options import (
    DEFAULT_HOST,
    ENV_HOST,
    ENV_NO_AUTH,
    ServeOptions,
    is_loopback,
)


def create_app(
    settings: Settings | None = None,
    options: ServeOptions | None = None,
    service: MemoryService | None = None,
) -> FastAPI:
    options = options or ServeOptions()
    options.check()
    root = service or MemoryService(settings=settings or load_settings())
    settings = root.settings
    policy = BrowserPolicy.for_server(options.host, settings.cors_origins, settings.allowed_hosts)
    _ = root.embedder  # load the model and check it against the store before serving
    root.start_worker()  # smart-ingest tasks, resuming what a stopped server left unfinished
    root.engine.embed_queue()  # vectors of turns answered before them, resumed likewise
    start_import_worker(root)  # file imports, likewise
    start_consolidation_worker(root.engine)  # consolidations, likewise
    schedule = None
    if settings.consolidate_interval_h > 0:
        schedule = Schedule(root.engine, settings.consolidate_interval_h * 3600)
    sessions = None
    if settings.session_consolidate_interval_min > 0:
        sessions = SessionWorker(root, settings.session_consolidate_interval_min * 60)
    tenant_admin = Tenants(root.engine)
    open_tenants = options.open_tenants
    if open_tenants is None:
        open_tenants = settings.open_tenants
    if open_tenants is None:
        open_tenants = is_loopback(options.host)

    proxy = Proxy(root)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if schedule is not None:
            schedule.start()
        if sessions is not None:
            sessions.start()
        yield
        if service is None:
            # the process is stopping (SIGTERM, Ctrl-C): a running import stops at its next
            # unit and is queued again for the next start, instead of holding the exit for
            # minutes; no worker claims anything more
            root.engine.interrupt()
        if sessions is not None:
            sessions.stop()
        if schedule is not None:
            schedule.stop()
        await proxy.aclose()  # exchanges handed over are remembered before the store closes
        if service is None:
            root.close()

    # FastAPIOffline serves Swagger UI's files from the installed package: /docs needs no CDN
    app = FastAPIOffline(
        title="memoryd",
        version=__version__,
        summary="Long-term memory for AI agents: the ourmem-compatible REST API.",
        default_response_class=CompactJSON,
        lifespan=lifespan,
        static_url=DOCS_ASSETS,
        swagger_ui_parameters={"persistAuthorization": True},
    )
    app.router.redirect_slashes = False  # a trailing slash is another (unknown) path
    app.state.service = root
    app.state.tenants = tenant_admin
    app.state.proxy = proxy

    def foreign_api(path: str, headers: Headers) -> ErrorFormat | None:
        """The proxy's routes answer errors as the API they speak (docs/proxy.md)."""
        dialect = dialect_for(path, headers)
        return dialect.error if dialect is not None else None

    app.state.foreign_api = foreign_api
    metrics = ServerMetrics(root)
    admin_key = root.settings.admin_key

    @app.get("/metrics", include_in_schema=False)
    def scrape(request: Request) -> Response:
        """Prometheus' text format (docs/operations.md); the admin key when one is set."""
        if admin_key and not is_admin(request.headers, admin_key):
            raise UnauthorizedError("/metrics needs the admin key (X-API-Key or Bearer)")
        return Response(metrics.render(), media_type=METRICS_TYPE)

    errors.install(app)
    modules = (
        tenants,
        memories,
        spaces,
        stats,
        imports,
        portability,
        consolidate,
        proxy_routes,
        compat,
        context,
        hosts,
    )
    for module in modules:
        app.include_router(module.router)
    app.include_router(checkpoints.router)
    app.include_router(agent_tasks.router)
    app.include_router(session_layers.router)
    app.include_router(spaces.sharing_router)
    dashboard.install(app)  # the pages at /, after the API's error handlers
    app.add_middleware(
        Guard,
        options=GuardOptions(
            tenants=tenant_admin,
            max_body_bytes=settings.max_body_bytes,
            max_upload_bytes=settings.max_import_bytes,
            open_tenants=open_tenants,
            admin_key=settings.admin_key,
            no_auth_tenant=LOCAL_TENANT if options.no_auth else None,
            body_timeout_s=settings.body_timeout_s,
            foreign_api=foreign_api,
        ),
    )
    # around the guard, so an allowed origin's preflight is answered before a key is asked
    # for; only the configured origins get CORS answers (none by default)
    app.add_middleware(
        CORSMiddleware,
        allow_origins=sorted(policy.allowed_origins),
        allow_methods=["*"],
        allow_headers=["*"],
    )
    # outermost: a request from a foreign web page, or for a foreign host name, goes no further
    app.add_middleware(BrowserGuard, policy=policy)
    # around everything: every dashboard answer, a refusal included, forbids framing
    app.add_middleware(SecurityHeaders)
    # and around that: every request, refused or not, counted and given its id
    app.add_middleware(Observed, metrics=metrics)
    return app


def app_from_env() -> FastAPI:
    """The app for one uvicorn worker, as ``memoryd serve`` configured it."""
    home = os.environ.get("MEMORYD_HOME")
    options = ServeOptions(
        host=os.environ.get(ENV_HOST, DEFAULT_HOST),
        no_auth=os.environ.get(ENV_NO_AUTH) == "1",
    )
    app = create_app(load_settings(Path(home) if home else None), options)
    # what the start made (modules, classes, the app) lives as long as the worker: kept out
    # of the collector's full passes, each of which otherwise stalls every request, /health
    # included (70-80 ms a pass, a few times a minute under load; 2-7 ms frozen)
    gc.collect()
    gc.freeze()
    return app
