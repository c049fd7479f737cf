"""The MCP server of memoryd: the ``@ourmem/mcp`` tools over a local home or a memoryd server."""

from memoryd.mcp.backend import Backend, EmbeddedBackend, RemoteBackend
from memoryd.mcp.server import build_server, serve_http, serve_stdio

__all__ = [
    "Backend",
    "EmbeddedBackend",
    "RemoteBackend",
    "build_server",
    "serve_http",
    "serve_stdio",
]
