"""Scopes: three agents, two tasks and their sessions, through the SDK, REST and MCP.

Every reader sees exactly global, the tasks it takes part in, its own agent
scope and its current session (docs/continuity.md), on search, list, get
and export; and writes only into those. The data is written through the
door under test (the SDK and REST; MCP reads the SDK's home).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

TESTS = Path(__file__).resolve().parents[1]
for folder in ("server", "mcp"):
    if str(TESTS / folder) not in sys.path:
        sys.path.insert(0, str(TESTS / folder))

from mcp_harness import McpClient, mcp_env, stdio_mcp  # noqa: E402
from scope_rule import READERS, SESSIONS, TASKS, allowed  # noqa: E402
from server_harness import RunningServer, create_tenant, start_server  # noqa: E402

from memoryd import Memory  # noqa: E402
from memoryd.embed.local import LocalEmbedder  # noqa: E402
from memoryd.errors import ForbiddenError, NotFoundError, ValidationError  # noqa: E402

QUERY = "kumquat ledger reconciliation"
# the tasks and their members; each agent's current session
# every scope a memory is written into, by the agent (and session) that writes it
WRITES: dict[str, tuple[str, str]] = {
    "global": ("a", "s1"),
    "task/t1": ("a", "s1"),
    "task/t2": ("c", "s3"),
    "agent/a": ("a", "s1"),
    "agent/b": ("b", "s2"),
    "agent/c": ("c", "s3"),
    "session/a/s1": ("a", "s1"),
    "session/b/s2": ("b", "s2"),
    "session/c/s3": ("c", "s3"),
    "session/a/s0": ("a", "s0"),  # an earlier session of a: not its current one
}


def content(scope: str) -> str:
    return f"kumquat ledger reconciliation note kept in {scope}"


@dataclass
class Door:
    """What one door answers for a reader: ids found by search, list, get and export."""

    ids: dict[str, str] = field(default_factory=dict)  # scope -> memory id
    search: Callable[[str], set[str]] = lambda reader: set()
    listed: Callable[[str], set[str]] = lambda reader: set()
    gettable: Callable[[str, str], bool] = lambda reader, memory_id: False
    exported: Callable[[str], set[str]] | None = None


# ---------------------------------------------------------------------- the SDK


@pytest.fixture(scope="module")
def sdk_home(tmp_path_factory: pytest.TempPathFactory, embedder: LocalEmbedder) -> Iterator[Path]:
    home = tmp_path_factory.mktemp("scopes-sdk") / "home"
    with Memory(home, embedder=embedder) as mem:
        for task, members in TASKS.items():
            creator, *others = members
            mem.as_agent(creator).tasks.create(task, f"task {task}")
            for agent in others:
                mem.tasks.join(task, agent)
    yield home


@pytest.fixture(scope="module")
def sdk(
    sdk_home: Path, embedder: LocalEmbedder, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Door]:
    mem = Memory(sdk_home, embedder=embedder)
    ids = {
        scope: mem.as_agent(*WRITES[scope]).add(content(scope), scope=f"/{scope}").id
        for scope in WRITES
    }
    out = tmp_path_factory.mktemp("scopes-export")

    def view(reader: str) -> Memory:
        return mem.as_agent(reader, SESSIONS[reader])

    def gettable(reader: str, memory_id: str) -> bool:
        try:
            return view(reader).get(memory_id).id == memory_id
        except NotFoundError:
            return False

    def exported(reader: str) -> set[str]:
        path = out / f"{reader}.jsonl"
        view(reader).export(path)
        lines = [json.loads(line) for line in path.read_text().splitlines()]
        return {x["memory"]["id"] for x in lines if x["type"] == "memory"}

    yield Door(
        ids,
        search=lambda r: {s.memory.id for s in view(r).search(QUERY, limit=50)},
        listed=lambda r: {m.id for m in view(r).list(limit=100)},
        gettable=gettable,
        exported=exported,
    )
    mem.close()


# ---------------------------------------------------------------------- REST


@pytest.fixture(scope="module")
def server(
    tmp_path_factory: pytest.TempPathFactory, embedder: LocalEmbedder
) -> Iterator[RunningServer]:
    running, stop = start_server(tmp_path_factory.mktemp("scopes-rest") / "home", embedder)
    yield running
    stop()


def _headers(agent: str, session: str | None) -> dict[str, str]:
    headers = {"X-Agent-Id": agent}
    if session is not None:
        headers["X-Session-Id"] = session
    return headers


@pytest.fixture(scope="module")
def rest(server: RunningServer) -> Iterator[Door]:
    _, key = create_tenant(server, "scopes")
    http = server.client(key)
    for task, members in TASKS.items():
        creator, *others = members
        made = http.post("/v1/tasks", json={"id": task}, headers=_headers(creator, None))
        assert made.status_code == 201, made.text
        for agent in others:
            joined = http.post(f"/v1/tasks/{task}/members", json={"agent_id": agent})
            assert joined.status_code == 200, joined.text
    ids = {}
    for scope, (agent, session) in WRITES.items():
        body = {"content": content(scope), "scope": scope}
        response = http.post("/v1/memories", json=body, headers=_headers(agent, session))
        assert response.status_code == 201, response.text
        assert response.json()["scope"] == scope
        ids[scope] = response.json()["id"]

    def get(reader: str, path: str, **params: Any) -> httpx.Response:
        return http.get(path, params=params, headers=_headers(reader, SESSIONS[reader]))

    def search(reader: str) -> set[str]:
        found = get(reader, "/v1/memories/search", q=QUERY, limit=50).json()["results"]
        return {r["memory"]["id"] for r in found}

    def listed(reader: str) -> set[str]:
        return {m["id"] for m in get(reader, "/v1/memories", limit=100).json()["memories"]}

    def gettable(reader: str, memory_id: str) -> bool:
        response = get(reader, f"/v1/memories/{memory_id}")
        assert response.status_code in (200, 404), response.text
        return response.status_code == 200

    def exported(reader: str) -> set[str]:
        lines = [json.loads(x) for x in get(reader, "/v1/export").text.splitlines()]
        return {x["memory"]["id"] for x in lines if x["type"] == "memory"}

    yield Door(ids, search, listed, gettable, exported)
    http.close()


# ---------------------------------------------------------------------- MCP


@pytest.fixture(scope="module")
def mcp(
    sdk: Door, sdk_home: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Callable[[str], McpClient]]:
    """One ``memoryd mcp`` per reader (as a host starts one per agent session), on the
    SDK's home: started on first use, kept for the module."""
    logs = tmp_path_factory.mktemp("scopes-mcp")
    opened: dict[str, Any] = {}

    def client(reader: str) -> McpClient:
        if reader not in opened:
            env = mcp_env(
                MEMORYD_HOME=str(sdk_home),
                MEMORYD_AGENT_ID=reader,
                MEMORYD_SESSION_ID=SESSIONS[reader],
            )
            manager = stdio_mcp(env, logs / f"{reader}.log")
            opened[reader] = (manager, manager.__enter__())
        return opened[reader][1]  # type: ignore[no-any-return]

    yield client
    for manager, _ in opened.values():
        manager.__exit__(None, None, None)


def mcp_door(sdk: Door, client: Callable[[str], McpClient]) -> Door:
    def search(reader: str) -> set[str]:
        found = client(reader).ok("memory_search", query=QUERY, limit=50)["results"]
        return {r["memory"]["id"] for r in found}

    def listed(reader: str) -> set[str]:
        return {m["id"] for m in client(reader).ok("memory_list", limit=100)["memories"]}

    def gettable(reader: str, memory_id: str) -> bool:
        result = client(reader).call("memory_get", id=memory_id)
        if result.is_error:
            assert "not found" in result.content[0].text  # type: ignore[union-attr]
        return not result.is_error

    return Door(sdk.ids, search, listed, gettable)


# ---------------------------------------------------------------------- the matrix


@pytest.fixture(params=["sdk", "rest", "mcp"])
def door(request: pytest.FixtureRequest) -> Door:
    if request.param == "mcp":
        return mcp_door(request.getfixturevalue("sdk"), request.getfixturevalue("mcp"))
    door: Door = request.getfixturevalue(request.param)
    return door


@pytest.mark.parametrize("reader", READERS)
def test_each_reader_sees_exactly_its_scopes(door: Door, reader: str) -> None:
    expected = {door.ids[s] for s in WRITES if allowed(reader, s)}
    everything = set(door.ids.values())
    assert door.search(reader) & everything == expected
    assert door.listed(reader) & everything == expected
    for scope, memory_id in door.ids.items():
        assert door.gettable(reader, memory_id) is allowed(reader, scope), scope
    if door.exported is not None:
        assert door.exported(reader) & everything == expected


def test_the_rule_gives_each_reader_a_different_view() -> None:
    """The matrix is not trivially uniform: each reader sees some scope another does not."""
    views = {r: frozenset(s for s in WRITES if allowed(r, s)) for r in READERS}
    assert len(set(views.values())) == len(READERS)
    assert all("session/a/s0" not in v for v in views.values())


def test_the_owner_sees_every_scope(sdk_home: Path, sdk: Door, embedder: LocalEmbedder) -> None:
    with Memory(sdk_home, embedder=embedder) as owner:
        assert {m.id for m in owner.list(limit=100)} >= set(sdk.ids.values())
        assert {s.memory.id for s in owner.search(QUERY, limit=50)} == set(sdk.ids.values())


# ---------------------------------------------------------------------- writes


@pytest.mark.parametrize(
    ("scope", "error"),
    [
        ("task/t2", ForbiddenError),  # a task a does not take part in
        ("agent/b", ForbiddenError),
        ("session/a/s0", ForbiddenError),  # not its current session
        ("session/b/s2", ForbiddenError),
        ("task/nowhere", NotFoundError),
        ("team-x", ValidationError),
        ("agent/", ValidationError),
    ],
)
def test_an_agent_never_writes_into_a_scope_it_cannot_see(
    sdk_home: Path, embedder: LocalEmbedder, scope: str, error: type[Exception]
) -> None:
    with Memory(sdk_home, embedder=embedder) as mem:
        with pytest.raises(error):
            mem.as_agent("a", "s1").add("a note that must not land", scope=scope)
        assert all(m.content != "a note that must not land" for m in mem.list(limit=100))


def test_an_agent_cannot_move_a_memory_out_of_sight(
    sdk: Door, sdk_home: Path, embedder: LocalEmbedder
) -> None:
    with Memory(sdk_home, embedder=embedder) as mem:
        b = mem.as_agent("b", "s2")
        with pytest.raises(ForbiddenError):
            b.update(sdk.ids["task/t1"], scope="agent/a")
        with pytest.raises(NotFoundError):  # a's private memory: b cannot even see it
            b.update(sdk.ids["agent/a"], content="rewritten by b")
        assert mem.get(sdk.ids["agent/a"]).content == content("agent/a")


def test_rest_write_refusals_are_clear(server: RunningServer, rest: Door) -> None:
    _, key = create_tenant(server, "scopes-refusals")
    with server.client(key) as http:
        a = _headers("a", "s1")
        cases = [
            ({"content": "x", "scope": "task/none"}, 404, "not_found"),
            ({"content": "x", "scope": "/bogus/x"}, 400, "validation_error"),
            ({"content": "x", "scope": "agent/b"}, 403, "forbidden"),
        ]
        for body, status, code in cases:
            response = http.post("/v1/memories", json=body, headers=a)
            assert response.status_code == status, response.text
            assert response.json()["error"]["code"] == code
        bad_agent = http.get("/v1/memories", headers={"X-Agent-Id": "a/b"})
        assert bad_agent.status_code == 400
        assert http.post("/v1/tasks/none/members", json={}, headers=a).status_code == 404
        other = http.post("/v1/tasks/none/members", json={"agent_id": "b"}, headers=a)
        assert other.status_code == 403, other.text
        assert other.json()["error"]["code"] == "forbidden"


def test_joining_and_leaving_a_task_changes_what_an_agent_sees(
    server: RunningServer, rest: Door
) -> None:
    _, key = create_tenant(server, "scopes-membership")
    with server.client(key) as http:
        a, c = _headers("a", "s1"), _headers("c", "s3")
        assert http.post("/v1/tasks", json={"id": "shared"}, headers=a).status_code == 201
        note = http.post(
            "/v1/memories",
            json={"content": content("task/shared"), "scope": "/task/shared"},
            headers=a,
        ).json()["id"]

        def c_sees() -> bool:
            return http.get(f"/v1/memories/{note}", headers=c).status_code == 200

        assert not c_sees()
        assert http.post("/v1/tasks/shared/members", json={}, headers=c).status_code == 200
        assert c_sees()
        tasks = http.get("/v1/tasks", params={"agent_id": "c"}).json()["tasks"]
        assert [t["id"] for t in tasks] == ["shared"]
        assert http.delete("/v1/tasks/shared/members/c", headers=c).status_code == 200
        assert not c_sees()
        assert http.delete("/v1/tasks/shared/members/c", headers=c).status_code == 404
        # an agent leaves for itself only
        assert http.delete("/v1/tasks/shared/members/a", headers=c).status_code == 403


def test_mcp_stores_into_the_agents_scopes_only(
    mcp: Callable[[str], McpClient], sdk_home: Path, embedder: LocalEmbedder
) -> None:
    b = mcp("b")
    stored = b.ok("memory_store", content="b's own mcp note on kumquats", scope="agent/b")
    assert stored["scope"] == "agent/b"
    assert "forbidden" in b.fail("memory_store", content="into a's scope", scope="agent/a")
    assert b.ok("session_layers") == {"layers": []}
    assert "forbidden" in b.fail("session_layers", agent_id="a")
    tasks = b.ok("task_list", agent_id="b")["tasks"]
    assert sorted(t["id"] for t in tasks) == ["t1", "t2"]
    with Memory(sdk_home, embedder=embedder) as mem:
        with pytest.raises(NotFoundError):
            mem.as_agent("a", "s1").get(stored["id"])
        assert mem.as_agent("b").get(stored["id"]).scope == "agent/b"


def test_async_memory_acts_as_an_agent(sdk: Door, sdk_home: Path, embedder: LocalEmbedder) -> None:
    import asyncio

    from memoryd.aio import AsyncMemory

    async def scenario() -> None:
        async with AsyncMemory(sdk_home, embedder=embedder) as mem:
            c = mem.as_agent("c", "s3")
            assert [t["id"] for t in await c.tasks.list("c")] == ["t2"]
            with pytest.raises(NotFoundError):
                await c.get(sdk.ids["task/t1"])
            await c.tasks.join("t1")
            assert (await c.get(sdk.ids["task/t1"])).scope == "task/t1"
            await c.tasks.leave("t1")
            with pytest.raises(NotFoundError):
                await c.get(sdk.ids["task/t1"])

    asyncio.run(scenario())
