"""``memoryd mcp`` embedded on a home, over stdio and streamable HTTP."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp_contract import McpContract, unique
from mcp_harness import McpClient, connect, mcp_env

from memoryd.context import ContextEngine
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

    def test_lcm_tools_reach_a_compacted_conversation(
        self, home_and_client: tuple[Path, McpClient]
    ) -> None:
        home, client = home_and_client
        conversation = unique("mcp-conversation")
        with MemoryService(home) as local:
            engine = ContextEngine(local)
            engine.ingest_batch(
                conversation,
                [
                    {"role": "user", "content": f"Note {i}: the invoice number is INV-{4000 + i}."}
                    for i in range(40)
                ],
            )
            summary = engine.compact(conversation).made[0].id
        hits = client.ok("lcm_grep", conversation_id=conversation, query="INV-4002")
        assert hits["hits"][0]["snippet"].startswith("Note 2")
        expanded = client.ok("lcm_expand_query", conversation_id=conversation, summary_id=summary)
        assert expanded["messages"][0]["content"] == "Note 0: the invoice number is INV-4000."
        # a conversation nothing was ingested into has nothing to find; expanding it is an error
        nothing = client.ok("lcm_grep", conversation_id="no-such-conversation", query="x")
        assert nothing["hits"] == []
        missing = client.call("lcm_expand_query", conversation_id="no-such-conversation", query="x")
        assert missing.is_error


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


def test_over_http_a_web_page_of_another_origin_is_refused(client: McpClient) -> None:
    """The main server's rule: a page on another port of this machine is another origin,
    and a host name that is not this machine's is refused (DNS rebinding)."""
    if not client.url:
        pytest.skip("stdio has no web origin")
    import httpx

    hello = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    port = client.url.split(":")[2].split("/")[0]
    for origin in (f"http://localhost:{int(port) + 1}", "http://127.0.0.1:1", "null"):
        answer = httpx.post(client.url, json=hello, headers={"origin": origin}, timeout=20)
        assert answer.status_code == 403, (origin, answer.text)
        assert answer.json()["error"]["code"] == "origin_not_allowed"
    rebound = httpx.post(client.url, json=hello, headers={"host": "evil.example"}, timeout=20)
    assert rebound.status_code == 400 and rebound.json()["error"]["code"] == "invalid_host"
