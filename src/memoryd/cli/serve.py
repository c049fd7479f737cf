"""``memoryd serve``: the REST server, with a first key made and shown on first start."""

from __future__ import annotations

import os
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated

import typer

from memoryd.cli.app import SERVER, app, console, fail, state
from memoryd.errors import MemorydError, StorageDamagedError, ValidationError
from memoryd.extras import extra
from memoryd.web.options import (
    DEFAULT_HOST,
    DEFAULT_PORT,
    ENV_HOST,
    ENV_NO_AUTH,
    ServeOptions,
    is_loopback,
)

if TYPE_CHECKING:
    from memoryd.config import Settings

BOOTSTRAP_KEY_NAME = "bootstrap"


class LogFormat(StrEnum):
    text = "text"
    json = "json"


@app.command(rich_help_panel=SERVER)
def serve(
    host: Annotated[str, typer.Option(help="Address to bind.")] = DEFAULT_HOST,
    port: Annotated[int, typer.Option(help="Port to listen on.")] = DEFAULT_PORT,
    workers: Annotated[int, typer.Option(min=1, help="Worker processes.")] = 1,
    no_auth: Annotated[
        bool, typer.Option("--no-auth", help="No keys: every request is the local tenant.")
    ] = False,
    open_tenants: Annotated[
        bool | None,
        typer.Option(
            "--open-tenants/--closed-tenants",
            help="Let anyone create a tenant (default: open on loopback only).",
        ),
    ] = None,
    log_level: Annotated[str, typer.Option(help="uvicorn log level.")] = "info",
    log_format: Annotated[
        LogFormat,
        typer.Option(
            envvar="MEMORYD_LOG_FORMAT",
            help="text for a terminal; json: one object a line, with the request id.",
        ),
    ] = LogFormat.text,
) -> None:
    """Serve the REST API (ourmem-compatible) on HOST:PORT until interrupted.

    On the first start of a home with no API keys, a key for the local tenant
    (the one the CLI and the SDK use) is created and printed once.
    """
    from memoryd.config import load_settings  # loaded by the command, not by --help

    try:
        ServeOptions(host=host, no_auth=no_auth).check()
        settings = load_settings(state.home)
        with extra("server", "memoryd serve"):  # the web stack loads only here
            import uvicorn

            from memoryd.server.app import create_app  # noqa: F401  (all of it, now)
            from memoryd.web.browser import BrowserPolicy

        # a bad MEMORYD_CORS_ORIGINS is one clear error now, not one per worker later
        BrowserPolicy.for_server(host, settings.cors_origins, settings.allowed_hosts)
        _check_database(settings)
        _check_port(host, port)
        if not no_auth:
            _bootstrap_key(settings.home)
    except MemorydError as exc:
        raise fail(exc) from None
    os.environ["MEMORYD_HOME"] = str(settings.home)
    os.environ[ENV_HOST] = host
    os.environ[ENV_NO_AUTH] = "1" if no_auth else "0"
    if open_tenants is not None:
        os.environ["MEMORYD_OPEN_TENANTS"] = "true" if open_tenants else "false"
    opened = open_tenants if open_tenants is not None else settings.open_tenants
    if opened is None:
        opened = is_loopback(host)
    upstream = settings.upstream_url or "none set (MEMORYD_UPSTREAM_URL)"
    console.print(
        f"memoryd serving [bold]http://{host}:{port}[/bold] from {settings.home}\n"
        f"  dashboard at /, API docs at /docs, memory proxy upstream: {upstream}; "
        f"tenant creation {'open' if opened else 'needs the admin key'}",
        markup=True,
        highlight=False,
    )
    from memoryd.server.logs import log_config

    uvicorn.run(
        "memoryd.server.app:app_from_env",
        factory=True,
        host=host,
        port=port,
        workers=workers,
        log_level=log_level,
        log_config=log_config(log_format.value, log_level),
    )


def _check_port(host: str, port: int) -> None:
    """A port another process holds is one clear error before the banner, not uvicorn's
    ``[Errno 98]`` after it."""
    import socket

    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise ValidationError(f"cannot bind {host}: {exc.strerror or exc}") from None
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as exc:
            raise ValidationError(
                f"port {port} on {host} is not free ({exc.strerror or exc}): "
                "another server holds it; pass --port (make serve PORT=…)"
            ) from None


def _check_database(settings: Settings) -> None:
    """SQLite's quick check before serving: a damaged file is refused, not served (and
    a missing or emptied one where a home held data is refused on opening). A PostgreSQL
    database is opened once: unreachable, or without pgvector, it is one clear error
    here rather than one per worker."""
    from memoryd.store import DB_FILENAME, open_store
    from memoryd.store.maintenance import check

    if settings.database_url:
        open_store(settings.database_url, settings.home).close()
        return
    home = settings.home
    problems = check(home / DB_FILENAME, full=False, must_exist=False)
    if problems:
        raise StorageDamagedError(
            f"{home / DB_FILENAME} is damaged ({'; '.join(problems[:3])}); memoryd will not "
            "serve it. Restore the last good backup with `memoryd restore BACKUP` (run "
            "`memoryd check` for the full report)"
        )


def _bootstrap_key(home: object) -> None:
    from memoryd.service import LOCAL_TENANT, MemoryService
    from memoryd.tenancy.tenants import Tenants

    with MemoryService(home=str(home)) as svc:
        tenants = Tenants(svc.engine)
        if tenants.has_keys():
            return
        _, secret = tenants.create_key(LOCAL_TENANT, BOOTSTRAP_KEY_NAME)
    console.print(
        "[bold]First start: created an API key for the local tenant.[/bold] It is shown "
        "only now; keep it (e.g. OMEM_API_KEY):\n"
        f"  {secret}"
    )
