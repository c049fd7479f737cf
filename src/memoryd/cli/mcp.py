"""``memoryd mcp``: the MCP server, embedded on the home or in front of a memoryd server.

The SDK is imported only when the command runs, so the other commands (and
the hooks, which must answer quickly) do not pay for loading it.
"""

from __future__ import annotations

import os
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated

import typer

from memoryd.cli.app import SERVER, app, err, fail, state
from memoryd.errors import MemorydError
from memoryd.extras import extra
from memoryd.web.options import DEFAULT_HOST, is_loopback

if TYPE_CHECKING:
    from memoryd.mcp.backend import Backend

DEFAULT_MCP_PORT = 8765
URL_VARIABLES = ("MEMORYD_URL", "OMEM_API_URL")
KEY_VARIABLES = ("MEMORYD_API_KEY", "OMEM_API_KEY")


class Transport(StrEnum):
    stdio = "stdio"
    http = "http"


def _first_env(names: tuple[str, ...]) -> str | None:
    for name in names:
        value = os.environ.get(name, "").strip()
        if value:
            return value
    return None


def make_backend(agent_id: str | None = None, session_id: str | None = None) -> Backend:
    """A server's client when ``MEMORYD_URL`` (or ``OMEM_API_URL``) is set, else the home;
    as ``agent_id`` in ``session_id`` when given (its scopes only)."""
    from memoryd.mcp.backend import EmbeddedBackend, RemoteBackend

    agent_id, session_id = agent_id or None, session_id or None
    url = _first_env(URL_VARIABLES)
    if url:
        key = _first_env(KEY_VARIABLES)
        return RemoteBackend(url, key, agent_id=agent_id, session_id=session_id)
    return EmbeddedBackend(state.home, agent_id=agent_id, session_id=session_id)


@app.command(rich_help_panel=SERVER)
def mcp(
    transport: Annotated[
        Transport, typer.Option(help="stdio for desktop hosts; http for streamable HTTP.")
    ] = Transport.stdio,
    host: Annotated[str, typer.Option(help="Address to bind (http only).")] = DEFAULT_HOST,
    port: Annotated[int, typer.Option(help="Port to listen on (http only).")] = DEFAULT_MCP_PORT,
    agent_id: Annotated[
        str | None,
        typer.Option(envvar="MEMORYD_AGENT_ID", help="Act as this agent: its scopes only."),
    ] = None,
    session_id: Annotated[
        str | None,
        typer.Option(envvar="MEMORYD_SESSION_ID", help="The agent's current session."),
    ] = None,
) -> None:
    """Serve the memory tools over MCP (Claude, Cursor, VS Code, Windsurf...).

    Embedded on the home (--home / MEMORYD_HOME) by default; with MEMORYD_URL
    (or OMEM_API_URL) set, a client of that memoryd server, authenticated by
    MEMORYD_API_KEY (or OMEM_API_KEY). Over http the endpoint is
    http://HOST:PORT/mcp.
    """
    try:
        with extra("mcp", "memoryd mcp"):
            import anyio

            from memoryd.mcp.server import serve_http, serve_stdio
        backend = make_backend(agent_id, session_id)
    except MemorydError as exc:
        raise fail(exc) from None
    err.print(f"memoryd mcp: {backend.describe}, over {transport.value}")
    if transport is Transport.http:
        if not is_loopback(host):
            err.print(
                f"[yellow]warning:[/yellow] the MCP endpoint has no authentication; anyone who "
                f"can reach {host}:{port} can read and change these memories"
            )
        err.print(f"memoryd mcp: listening on http://{host}:{port}/mcp")
        anyio.run(serve_http, backend, host, port)
    else:
        anyio.run(serve_stdio, backend)
