"""``memoryd mcp`` in front of a running memoryd server, over stdio and streamable HTTP."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from mcp import MCPError
from mcp_contract import EXPECTED, McpContract, unique
from mcp_harness import McpClient, connect, free_port, mcp_env, stdio_mcp
from server_harness import RunningServer, create_tenant, module_server

# how quickly a call must fail when the server is not there at all
DOWN_FAILS_WITHIN_S = 5


server = module_server("mcp-server")


@pytest.fixture(scope="module")
def teammate(server: RunningServer) -> str:
    return create_tenant(server, "teammate")[0]


@pytest.fixture(scope="module", params=["stdio", "http"])
def session(
    request: pytest.FixtureRequest,
    server: RunningServer,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[str, McpClient]]:
    """A tenant of its own and one session per transport; stdio is configured the
    memoryd way, http the ourmem way (``OMEM_API_URL`` / ``OMEM_API_KEY``)."""
    _, key = create_tenant(server, f"mcp-{request.param}")
    if request.param == "stdio":
        env = mcp_env(MEMORYD_URL=server.url, MEMORYD_API_KEY=key)
    else:
        env = mcp_env(OMEM_API_URL=server.url + "/", OMEM_API_KEY=key)
    log = tmp_path_factory.mktemp(f"mcp-remote-{request.param}") / "mcp.log"
    with connect(request.param, env, log) as client:
        yield key, client


@pytest.fixture
def client(session: tuple[str, McpClient]) -> McpClient:
    return session[1]


@pytest.fixture
def other_user(teammate: str) -> str:
    return teammate


class TestRemote(McpContract):
    def test_memories_are_the_servers(
        self, server: RunningServer, session: tuple[str, McpClient]
    ) -> None:
        key, client = session
        stored = client.ok("memory_store", content=unique("Stored over MCP, read over REST"))
        with server.client(key) as http:
            assert http.get(f"/v1/memories/{stored['id']}").json()["content"] == stored["content"]
            made = http.post("/v1/memories", json={"content": unique("Stored over REST")}).json()
        assert client.ok("memory_get", id=made["id"])["content"] == made["content"]


def test_a_server_that_is_down_gives_tool_errors_quickly(tmp_path: Path) -> None:
    down = f"http://127.0.0.1:{free_port()}"
    env = mcp_env(MEMORYD_URL=down, MEMORYD_API_KEY="mk_whatever")
    with stdio_mcp(env, tmp_path / "mcp.log") as client:
        for tool, arguments in [
            ("memory_search", {"query": "anything"}),
            ("memory_store", {"content": "lost?"}),
            ("space_list", {}),
        ]:
            started = time.monotonic()
            message = client.fail(tool, **arguments)
            assert time.monotonic() - started < DOWN_FAILS_WITHIN_S
            assert f"cannot reach {down}" in message and "[server_error]" in message
            assert "running?" in message
        with pytest.raises(MCPError, match="cannot reach"):
            client.resource("omem://profile")
        assert len(client.tools()) == len(EXPECTED)  # the session itself is fine


def test_a_wrong_key_is_a_tool_error(server: RunningServer, tmp_path: Path) -> None:
    env = mcp_env(MEMORYD_URL=server.url, MEMORYD_API_KEY="mk_not_a_key")
    with stdio_mcp(env, tmp_path / "mcp.log") as client:
        message = client.fail("memory_list")
        assert "unauthorized" in message and "MEMORYD_API_KEY" in message
    # and no key at all against a server that needs one
    with stdio_mcp(mcp_env(MEMORYD_URL=server.url), tmp_path / "nokey.log") as client:
        assert "unauthorized" in client.fail("memory_stats")
    assert httpx.get(f"{server.url}/health").status_code == 200
