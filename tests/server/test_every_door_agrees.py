"""Every read door agrees on the one current value after a chain of changes.

The user lives in Lisbon, moves to Oslo, then to Bergen, each said in a
conversation of its own through smart ingest on a real server. Then the same
store is read through each door a user or an agent touches: REST search,
the profile, the Claude Code SessionStart hook (remote), the memory proxy's
recall, the hosts' recall route, MCP, the context engine's recall layers,
the agents' prefetch, the dashboard and ``memoryd list``. Each gives Bergen
as current and never Lisbon or Oslo as current.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from server_harness import RunningServer, memoryd_command, start_server

from memoryd.agents.manager import MemoryManager
from memoryd.context.config import ContextConfig
from memoryd.context.recall import Recall
from memoryd.context.triples import TripleStore
from memoryd.embed.local import LocalEmbedder
from memoryd.hooks import session_start
from memoryd.hooks.backend import RemoteBackend as HookRemote
from memoryd.hooks.config import HookConfig
from memoryd.mcp.backend import RemoteBackend as McpRemote
from memoryd.proxy.recall import recall_block
from memoryd.proxy.settings import MemorySettings
from memoryd.web.options import ServeOptions

MOVES = ["I live in Lisbon.", "I moved to Oslo.", "We just relocated to Bergen."]
QUESTION = "where does the user live"
STALE = ("Lisbon", "Oslo")


@pytest.fixture(scope="module")
def server(
    tmp_path_factory: pytest.TempPathFactory, embedder: LocalEmbedder
) -> Iterator[RunningServer]:
    home = tmp_path_factory.mktemp("doors") / "home"
    running, stop = start_server(home, embedder, ServeOptions(no_auth=True))
    with running.client() as http:
        for number, said in enumerate(MOVES):
            at = datetime(2025, 1 + 4 * number, 1, tzinfo=UTC).isoformat()
            body = {
                "messages": [{"role": "user", "content": said, "created_at": at}],
                "session_id": f"move-{number}",
                "mode": "smart",
            }
            task = http.post("/v1/memories", json=body).json()["task_id"]
            running.service.wait_for_task(task, timeout_s=60)
    yield running
    stop()


def holds_current(text: str) -> bool:
    """Bergen is given, and no line gives an old city without it."""
    lines = [line for line in text.splitlines() if any(city in line for city in STALE)]
    return "Bergen" in text and all("Bergen" in line for line in lines)


def test_rest_search_and_profile(server: RunningServer) -> None:
    with server.client() as http:
        found = http.get("/v1/memories/search", params={"q": QUESTION, "limit": 10}).json()
        contents = [r["memory"]["content"] for r in found["results"]]
        assert "Bergen" in contents[0], contents
        assert holds_current("\n".join(contents)), contents
        profile = http.get("/v1/profile").json()
        assert holds_current("\n".join(profile["static_facts"])), profile
        recall = http.get("/v1/recall", params={"q": QUESTION}).json()["text"]
        assert holds_current(recall), recall


def test_the_claude_code_session_start_hook(server: RunningServer) -> None:
    backend = HookRemote(server.url, None, timeout_s=30)
    try:
        result = session_start.run({"source": "startup"}, backend, HookConfig(url=server.url))
    finally:
        backend.close()
    assert result.output is not None
    text = result.output["hookSpecificOutput"]["additionalContext"]
    assert holds_current(text), text


def test_the_memory_proxy_recall(server: RunningServer) -> None:
    block = recall_block(server.service, MemorySettings(), [("user", "Where do I live now?")])
    assert holds_current(block), block


def test_mcp(server: RunningServer) -> None:
    mcp = McpRemote(server.url)
    try:
        found = mcp.search(QUESTION, 10, None, None)
        listed = mcp.list_recent(50)["memories"]
    finally:
        mcp.close()
    text = json.dumps(found, ensure_ascii=False)
    assert "Bergen" in text
    for result in found["results"]:
        content = result["memory"]["content"]
        assert not any(city in content for city in STALE) or "Bergen" in content
    for memory in listed:
        if any(city in memory["content"] for city in STALE):
            assert memory["status"] == "superseded", memory


def test_the_context_engines_recall_layers(server: RunningServer) -> None:
    svc = server.service
    recall = Recall(svc, ContextConfig(), TripleStore(svc.engine.sqlite_store))
    recalled = recall.recall(QUESTION, 4000)
    assert holds_current(recalled.text), recalled.text


def test_the_agents_prefetch(server: RunningServer, tmp_path: Path) -> None:
    settings: dict[str, Any] = {"provider": "remote", "options": {"url": server.url}}
    manager = MemoryManager(home=tmp_path / "agent-home", settings=settings)
    try:
        block = manager.prefetch("Where do I live these days?", session_id="another")
    finally:
        manager.shutdown()
    assert holds_current(block), block


def test_the_dashboard_lists_old_cities_as_superseded(server: RunningServer) -> None:
    with server.client() as http:
        page = http.get("/").text  # the memories list
    rows = re.findall(r"<tr.*?</tr>", page, re.S)
    for row in rows:
        if any(city in row for city in STALE) and "Bergen" not in row:
            assert ">superseded<" in row, row
    assert any("Bergen" in row and ">current<" in row for row in rows), rows


def test_the_cli_list(server: RunningServer) -> None:
    ran = subprocess.run(
        memoryd_command(server.home, "--json", "list", "--current", "-n", "100"),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert ran.returncode == 0, ran.stderr
    current = [m["content"] for m in json.loads(ran.stdout)["memories"]]
    assert holds_current("\n".join(current)), current
