"""``memoryd mcp`` as a host runs it: a real process, driven by the official MCP client.

The client session lives in an event loop of its own (an anyio blocking
portal), so plain synchronous tests can share one session per module.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any, TextIO

import httpx
from anyio.from_thread import BlockingPortal, start_blocking_portal
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CallToolResult, Tool

START_TIMEOUT_S = 90
CALL_TIMEOUT_S = 60
MCP_COMMAND = [sys.executable, "-m", "memoryd.cli", "mcp"]
# what the tests set themselves: a developer's own configuration must not leak in
CLEARED = (
    "MEMORYD_URL",
    "OMEM_API_URL",
    "MEMORYD_API_KEY",
    "OMEM_API_KEY",
    "MEMORYD_HOME",
    "MEMORYD_CONFIG",
)


def mcp_env(**values: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in CLEARED}
    return {**env, "PYTHONUNBUFFERED": "1", **values}


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class McpClient:
    """One MCP session, called synchronously."""

    def __init__(self, portal: BlockingPortal, session: ClientSession, url: str = "") -> None:
        self.url = url  # the HTTP endpoint; "" over stdio
        self.portal = portal
        self.session = session

    def call(self, tool: str, **arguments: Any) -> CallToolResult:
        result: CallToolResult = self.portal.call(self.session.call_tool, tool, arguments)
        return result

    def ok(self, tool: str, **arguments: Any) -> dict[str, Any]:
        """The structured result of a call that must succeed."""
        result = self.call(tool, **arguments)
        text = result.content[0].text if result.content else ""  # type: ignore[union-attr]
        assert not result.is_error, text
        assert isinstance(result.structured_content, dict), result
        return result.structured_content

    def text(self, tool: str, **arguments: Any) -> str:
        result = self.call(tool, **arguments)
        assert not result.is_error, result
        return str(result.content[0].text)  # type: ignore[union-attr]

    def fail(self, tool: str, **arguments: Any) -> str:
        """The message of a call that must come back as a tool error."""
        result = self.call(tool, **arguments)
        assert result.is_error, result
        assert len(result.content) == 1 and result.content[0].type == "text"
        return str(result.content[0].text)

    def tools(self) -> list[Tool]:
        return list(self.portal.call(self.session.list_tools).tools)

    def resource(self, uri: str) -> str:
        result = self.portal.call(self.session.read_resource, uri)
        return str(result.contents[0].text)  # type: ignore[union-attr]


@asynccontextmanager
async def _stdio_session(env: dict[str, str], errlog: TextIO) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(command=MCP_COMMAND[0], args=MCP_COMMAND[1:], env=env)
    async with (
        stdio_client(params, errlog=errlog) as (read, write),
        ClientSession(read, write, read_timeout_seconds=CALL_TIMEOUT_S) as session,
    ):
        await session.initialize()
        yield session


@asynccontextmanager
async def _http_session(url: str) -> AsyncIterator[ClientSession]:
    async with (
        streamable_http_client(url) as (read, write),
        ClientSession(read, write, read_timeout_seconds=CALL_TIMEOUT_S) as session,
    ):
        await session.initialize()
        yield session


@contextmanager
def stdio_mcp(env: dict[str, str], log: Path) -> Iterator[McpClient]:
    """``memoryd mcp`` on stdio, as Claude Desktop starts it."""
    with (
        log.open("w") as errlog,
        start_blocking_portal() as portal,
        portal.wrap_async_context_manager(_stdio_session(env, errlog)) as session,
    ):
        yield McpClient(portal, session)


def wait_listening(url: str, process: subprocess.Popen[str], log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        assert process.poll() is None, log.read_text()
        try:
            httpx.get(url, timeout=1)  # any answer means it listens
            return
        except httpx.HTTPError:
            time.sleep(0.1)
    raise AssertionError(f"memoryd mcp did not listen on {url}")


@contextmanager
def http_mcp(env: dict[str, str], log: Path) -> Iterator[McpClient]:
    """``memoryd mcp --transport http``, then a client session on its /mcp endpoint.

    On the way out the server is stopped with SIGTERM, as a service manager
    would, and must exit 0: it closes its store instead of dying mid-write.
    """
    port = free_port()
    with log.open("w") as out:
        process = subprocess.Popen(
            [*MCP_COMMAND, "--transport", "http", "--port", str(port)],
            stdout=out,
            stderr=subprocess.STDOUT,
            text=True,
            env=env,
        )
        url = f"http://127.0.0.1:{port}/mcp"
        try:
            wait_listening(url, process, log)
            with (
                start_blocking_portal() as portal,
                portal.wrap_async_context_manager(_http_session(url)) as session,
            ):
                yield McpClient(portal, session, url)
        finally:
            process.send_signal(signal.SIGTERM)
            code = process.wait(timeout=30)
    assert code == 0, log.read_text()


@contextmanager
def connect(transport: str, env: dict[str, str], log: Path) -> Iterator[McpClient]:
    with (stdio_mcp if transport == "stdio" else http_mcp)(env, log) as client:
        yield client
