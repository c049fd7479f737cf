"""``memoryd mcp`` embedded on a home, over stdio and streamable HTTP."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp_contract import McpContract, unique
from mcp_harness import McpClient, connect, mcp_env

from memoryd.service import MemoryService

OTHER_USER = "teammate"


@pytest.fixture(scope="module", params=["stdio", "http"])
def home_and_client(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Path, McpClient]]:
    """One home and one session per transport, shared by the module's tests."""
    root = tmp_path_factory.mktemp(f"mcp-embedded-{request.param}")
    home = root / "home"
    MemoryService(home, tenant_id=OTHER_USER).close()  # someone to share with
    with connect(request.param, mcp_env(MEMORYD_HOME=str(home)), root / "mcp.log") as client:
        yield home, client


@pytest.fixture
def client(home_and_client: tuple[Path, McpClient]) -> McpClient:
    return home_and_client[1]


@pytest.fixture
def other_user() -> str:
    return OTHER_USER


class TestEmbedded(McpContract):
    def test_memories_land_in_the_home_the_cli_uses(
        self, home_and_client: tuple[Path, McpClient]
    ) -> None:
        home, client = home_and_client
        stored = client.ok("memory_store", content=unique("Written through MCP"))
        with MemoryService(home) as local:
            assert local.get(stored["id"]).content == stored["content"]
        stats = client.ok("memory_stats")
        assert stats["home"] == str(home)


def test_an_unknown_transport_is_refused(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "memoryd.cli", "mcp", "--transport", "pigeon"],
        capture_output=True,
        text=True,
        env=mcp_env(MEMORYD_HOME=str(tmp_path / "home")),
        timeout=60,
    )
    assert done.returncode == 2
    assert "pigeon" in done.stderr and "stdio" in done.stderr
