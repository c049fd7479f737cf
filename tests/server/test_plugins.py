"""The ourmem plugins' HTTP calls, replayed byte for byte against a real server (reference §5).

Each test sends what one client sends (headers, paths, query strings built
like ``URLSearchParams``, JSON bodies with ``undefined`` keys dropped) and
checks the response fields that client reads. Every response also passes
through ``Plugin.call``, which checks the compact JSON style and every
Memory object in it (§1, §2.1).
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlencode

import httpx

if TYPE_CHECKING:
    from server_harness import RunningServer, TenantClient

# §2.1's keys in order, then memoryd's additions
WIRE_ORDER = """
id content l0_abstract l1_overview l2_content category memory_type state tier importance
confidence access_count tags scope agent_id session_id tenant_id source relations
superseded_by invalidated_at created_at updated_at last_accessed_at space_id visibility
owner_agent_id provenance version
valid_from valid_to expires_at key marks status
"""
MEMORY_KEYS = WIRE_ORDER.split()
TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00")
MEMORY_TIMES = ("invalidated_at", "created_at", "updated_at", "last_accessed_at")
MEMORY_TIMES += ("valid_from", "valid_to", "expires_at")
CATEGORIES = {"profile", "preferences", "entities", "events", "cases", "patterns"}


def check_memory(m: dict[str, Any]) -> None:
    """§2.1: every key present, in order, ``id`` first; 6-digit UTC timestamps."""
    assert list(m) == MEMORY_KEYS
    assert isinstance(m["id"], str) and m["id"]
    assert m["category"] in CATEGORIES
    assert m["memory_type"] in {"pinned", "insight", "session"}
    assert m["status"] in {
        "current",
        "superseded",
        "ended",
        "expired",
        "pending",
        "archived",
        "deleted",
    }
    assert isinstance(m["tags"], list) and all(isinstance(t, str) for t in m["tags"])
    for name in MEMORY_TIMES:
        value = m[name]
        assert value is None or TIMESTAMP.fullmatch(value), (name, value)
    assert m["created_at"] is not None and m["updated_at"] is not None
    if m["provenance"] is not None:
        for name in ("shared_at", "original_created_at"):
            assert TIMESTAMP.fullmatch(m["provenance"][name]), (name, m["provenance"])


def check_memories(value: Any) -> int:
    """Check every Memory object anywhere in a response body; how many there were."""
    if isinstance(value, list):
        return sum(check_memories(v) for v in value)
    if not isinstance(value, dict):
        return 0
    if "l2_content" in value:
        check_memory(value)
        return 1
    return sum(check_memories(v) for v in value.values())


class Plugin:
    """A TS/bash client: ``Content-Type: application/json`` and the key on every request."""

    def __init__(self, server: RunningServer, tenant: TenantClient) -> None:
        self.tenant = tenant
        self.http = server.client(tenant.key, **{"Content-Type": "application/json"})

    def call(
        self, method: str, path: str, body: Any = None, expect: int = 200, **params: Any
    ) -> Any:
        """One request; ``params`` are encoded like ``URLSearchParams`` (spaces as ``+``)."""
        query = urlencode({k: v for k, v in params.items() if v is not None})
        url = f"{path}?{query}" if query else path
        content = None if body is None else json.dumps(body, separators=(",", ":"))
        response = self.http.request(method, url, content=content)
        assert response.status_code == expect, (method, url, response.status_code, response.text)
        data = response.json()
        # serde-style compact JSON, key order kept: re-serializing gives the same bytes
        assert response.text == json.dumps(data, ensure_ascii=False, separators=(",", ":"))
        check_memories(data)
        self.last = response
        return data


def transcript(word: str, n: int) -> list[dict[str, str]]:
    """Alternating user/assistant turns that mention ``word`` (and never the word 'error')."""
    roles = ("user", "assistant")
    return [
        {"role": roles[i % 2], "content": f"turn {i} about {word} number {i}"} for i in range(n)
    ]


def test_claude_code_hooks_and_skills(server: RunningServer, alice: TenantClient) -> None:
    cc = Plugin(server, alice)
    # SessionStart on an empty store: nothing to inject, but still a 200 list
    empty = cc.call("GET", "/v1/memories", limit=20, offset=0)
    assert empty["memories"] == [] and empty["total_count"] == 0
    assert "error" not in cc.last.text

    # skill memory-store
    text = "The user prefers tabs over spaces in Makefiles"
    stored = cc.call(
        "POST",
        "/v1/memories",
        {"content": text, "tags": ["manual"], "source": "claude-code"},
        expect=201,
    )
    assert cc.last.text.startswith('{"id":"')
    assert re.findall(r'"id":"[^"]*"', cc.last.text)[0] == f'"id":"{stored["id"]}"'
    want = {"content": text, "tags": ["manual"], "source": "claude-code", "l2_content": text}
    assert {k: stored[k] for k in want} == want and stored["memory_type"] == "pinned"
    assert stored["tenant_id"] == alice.id and stored["agent_id"] is None

    # SessionStart: what the hook prints, and its failure test on the raw text
    listed = cc.call("GET", "/v1/memories", limit=20, offset=0)
    assert "error" not in cc.last.text
    assert [m["id"] for m in listed["memories"]] == [stored["id"]]
    for m in listed["memories"]:
        line = (m["l0_abstract"] or m["content"])[:200]
        assert line and isinstance(m["category"], str) and isinstance(m["tags"], list)
        created = datetime.fromisoformat(m["created_at"].replace("Z", "+00:00"))
        assert created.utcoffset() == timedelta(0)

    # skill memory-recall
    found = cc.call("GET", "/v1/memories/search", q="tabs in Makefiles", limit=10)
    assert found["results"], found
    top = found["results"][0]
    assert top["memory"]["id"] == stored["id"] and isinstance(top["score"], float)
    assert {"id", "content", "tags", "created_at"} <= set(top["memory"])
    assert top["memory"]["tags"] == ["manual"]
    # the hook's `curl -f` then `grep -o '"id":"[^"]*"'` path
    assert f'{{"memory":{{"id":"{stored["id"]}"' in cc.last.text


def test_claude_code_stop_and_precompact_capture(
    server: RunningServer, alice: TenantClient
) -> None:
    cc = Plugin(server, alice)
    turns = transcript("zanzibar", 16)
    turns[-1]["content"] = "long answer " + "x" * 3000
    clip = [{"role": t["role"], "content": t["content"][:2000]} for t in turns]

    stop_body = {
        "messages": clip[-10:],
        "mode": "smart",
        "tags": ["auto-captured", "claude-code"],
        "source": "claude-code",
    }
    stop = cc.call("POST", "/v1/memories", stop_body, expect=202)
    assert isinstance(stop["task_id"], str) and stop["stored_count"] == 10
    task = cc.call("GET", f"/v1/tasks/{stop['task_id']}")
    assert task["id"] == stop["task_id"] and task["status"] in ("queued", "running", "completed")
    assert task["stored_count"] == 10

    pre = {**stop_body, "messages": clip[-15:], "tags": ["pre-compact", "claude-code"]}
    compact = cc.call("POST", "/v1/memories", pre, expect=202)
    # no session id: the 10 turns the Stop hook sent already are repeats, 5 are new
    assert compact["stored_count"] == 5 and compact["task_id"] != stop["task_id"]

    # the captured turns carry the hook's tags and source
    auto = cc.call(
        "GET", "/v1/memories", memory_type="session", tags="auto-captured,claude-code", limit=100
    )
    assert auto["total_count"] == 10 and len(auto["memories"]) == 10
    both = cc.call("GET", "/v1/memories", memory_type="session", tags="claude-code", limit=100)
    assert both["total_count"] == 15
    for m in both["memories"]:
        assert m["source"] == "claude-code" and m["memory_type"] == "session"
        assert "claude-code" in m["tags"] and ("auto-captured" in m["tags"]) != (
            "pre-compact" in m["tags"]
        )
    assert max(len(m["content"]) for m in both["memories"]) <= 2000 + len("assistant: ")

    # searchable, and filterable by the tags (memoryd's filter_tags) and source the hooks sent
    hits = cc.call(
        "GET",
        "/v1/memories/search",
        q="zanzibar",
        limit=10,
        filter_tags="pre-compact,claude-code",
        source="claude-code",
    )
    assert hits["results"]
    for r in hits["results"]:
        assert "pre-compact" in r["memory"]["tags"] and r["memory"]["source"] == "claude-code"
        assert "zanzibar" in r["memory"]["content"] or "x" * 100 in r["memory"]["content"]
    # SessionStart lists durable memories only: captured turns stay out of the prompt
    assert cc.call("GET", "/v1/memories", limit=20, offset=0)["memories"] == []
    assert "error" not in cc.last.text


def test_mcp_tools_and_profile_resource(
    server: RunningServer, alice: TenantClient, bob: TenantClient
) -> None:
    mcp, peer = Plugin(server, alice), Plugin(server, bob)
    # memory_store: tags ?? [], source ?? "mcp"
    plain = mcp.call(
        "POST",
        "/v1/memories",
        {"content": "Deploys happen on Fridays", "tags": [], "source": "mcp"},
        expect=201,
    )
    assert plain["id"] and plain["content"] == "Deploys happen on Fridays"
    assert (plain["tags"], plain["source"]) == ([], "mcp")
    ab = mcp.call(
        "POST",
        "/v1/memories",
        {"content": "The staging database runs Postgres 16", "tags": ["a", "b"], "source": "mcp"},
        expect=201,
    )
    only_a = mcp.call(
        "POST",
        "/v1/memories",
        {"content": "The production database runs Postgres 15", "tags": ["a"], "source": "mcp"},
        expect=201,
    )

    # memory_search: q, limit (default 10), optional scope and tags=a,b
    found = mcp.call("GET", "/v1/memories/search", q="database Postgres", limit=10)
    assert {r["memory"]["id"] for r in found["results"]} >= {ab["id"], only_a["id"]}
    for r in found["results"]:
        assert isinstance(r["score"], int | float) and f"{r['score']:.2f}"
        assert isinstance(r["memory"]["tags"], list) and isinstance(r["memory"]["content"], str)
    scoped = mcp.call("GET", "/v1/memories/search", q="database Postgres", limit=10, scope="global")
    assert {r["memory"]["id"] for r in scoped["results"]} >= {ab["id"], only_a["id"]}
    none = mcp.call("GET", "/v1/memories/search", q="database Postgres", limit=10, scope="team-x")
    assert none["results"] == []
    # tags on search are ignored, as upstream (§4.5); memoryd's own filter is filter_tags
    tagged = mcp.call("GET", "/v1/memories/search", q="database Postgres", limit=10, tags="a,b")
    assert {r["memory"]["id"] for r in tagged["results"]} >= {ab["id"], only_a["id"]}
    both = mcp.call(
        "GET", "/v1/memories/search", q="database Postgres", limit=10, filter_tags="a,b"
    )
    assert [r["memory"]["id"] for r in both["results"]] == [ab["id"]]

    # memory_get, memory_update (with and without tags), memory_list
    got = mcp.call("GET", f"/v1/memories/{ab['id']}")
    assert {k: got[k] for k in ("id", "content", "tags", "created_at")} == {
        k: ab[k] for k in ("id", "content", "tags", "created_at")
    }
    updated = mcp.call(
        "PUT",
        f"/v1/memories/{ab['id']}",
        {"content": "Staging runs Postgres 17", "tags": ["a", "b"]},
    )
    assert updated is not None and updated["content"] == "Staging runs Postgres 17"
    kept = mcp.call("PUT", f"/v1/memories/{plain['id']}", {"content": "Deploys happen on Mondays"})
    assert kept["tags"] == [] and kept["l2_content"] == "Deploys happen on Mondays"
    listed = mcp.call("GET", "/v1/memories", limit=20, offset=0)
    assert len(listed["memories"]) == 3
    for m in listed["memories"]:
        assert isinstance(m["category"], str) and isinstance(m["tags"], list) and m["content"]

    # memory_ingest: agent_id/session_id undefined, so absent from the JSON
    ingest = mcp.call(
        "POST",
        "/v1/memories",
        {"messages": transcript("kubernetes", 2), "mode": "smart", "tags": ["mcp-ingest"]},
        expect=202,
    )
    assert ingest["stored_count"] == 2 and ingest["task_id"]
    turns = mcp.call("GET", "/v1/memories", memory_type="session", tags="mcp-ingest")
    assert turns["total_count"] == 2 and {m["agent_id"] for m in turns["memories"]} == {None}
    stats = mcp.call("GET", "/v1/stats")
    assert isinstance(stats["total"], int) and stats["total"] >= 3

    # memory_profile and the omem://profile resource: the same GET, JSON-dumped
    profile = mcp.call("GET", "/v1/profile")
    assert "Deploys happen on Mondays" in profile["static_facts"]
    assert profile["search_results"] is None and isinstance(profile["profile"], str)
    assert json.dumps(profile)

    # space_create, space_list (.spaces), space_add_member with an encoded id
    space = mcp.call("POST", "/v1/spaces", {"name": "platform", "space_type": "team"}, expect=201)
    team = space["id"]
    assert team.startswith("team/") and space["owner_id"] == alice.id
    spaces = mcp.call("GET", "/v1/spaces")["spaces"]
    assert isinstance(spaces, list) and team in {s["id"] for s in spaces}
    encoded = quote(team, safe="")  # encodeURIComponent: only the slash needs escaping here
    assert encoded == quote(team, safe="-_.!~*'()") and "%2F" in encoded
    added = mcp.call("POST", f"/v1/spaces/{encoded}/members", {"user_id": bob.id, "role": "member"})
    assert b"team%2F" in mcp.last.request.url.raw_path
    assert {m["user_id"]: m["role"] for m in added["members"]}[bob.id] == "member"
    # bob is invited; the space is his once he accepts (a memoryd route, not a plugin's)
    assert team not in {s["id"] for s in peer.call("GET", "/v1/spaces")["spaces"]}
    peer.call("POST", f"/v1/invitations/{encoded}/accept")
    assert team in {s["id"] for s in peer.call("GET", "/v1/spaces")["spaces"]}

    # memory_share, memory_pull (visibility undefined), memory_reshare
    copy = mcp.call("POST", f"/v1/memories/{ab['id']}/share", {"target_space": team}, expect=201)
    assert copy["space_id"] == team and copy["provenance"]["shared_from_memory"] == ab["id"]
    again = mcp.call("POST", f"/v1/memories/{ab['id']}/share", {"target_space": team})
    assert again["id"] == copy["id"]
    pulled = peer.call(
        "POST", f"/v1/memories/{copy['id']}/pull", {"source_space": team}, expect=201
    )
    assert pulled["visibility"] == "private" and pulled["tenant_id"] == bob.id
    assert pulled["content"] == "Staging runs Postgres 17"
    mcp.call("PUT", f"/v1/memories/{ab['id']}", {"content": "Staging runs Postgres 18"})
    fresh = mcp.call("POST", f"/v1/memories/{copy['id']}/reshare", {})
    assert fresh["id"] != copy["id"] and fresh["content"] == "Staging runs Postgres 18"
    assert fresh["space_id"] == team
    moved = mcp.call("POST", f"/v1/memories/{fresh['id']}/reshare", {"target_space": team})
    assert moved["space_id"] == team and moved["content"] == fresh["content"]

    # memory_forget
    assert mcp.call("DELETE", f"/v1/memories/{only_a['id']}") == {"status": "deleted"}
    gone = mcp.call("GET", "/v1/memories/search", q="production database", limit=10)
    assert only_a["id"] not in {r["memory"]["id"] for r in gone["results"]}


def test_openclaw_hooks(server: RunningServer, alice: TenantClient) -> None:
    claw = Plugin(server, alice)
    assert claw.call("GET", "/health") == {"status": "ok", "storage": "ok"}
    fact = claw.call(
        "POST",
        "/v1/memories",
        {"content": "The user lives in Lisbon and cycles to work", "tags": ["home"]},
        expect=201,
    )

    # before_prompt_build: q = prompt[:500], or "*" when there is no prompt
    prompt = "Where does the user live and how do they commute? " + "please " * 120
    found = claw.call("GET", "/v1/memories/search", q=prompt[:500], limit=10)
    assert fact["id"] in {r["memory"]["id"] for r in found["results"]}
    for r in found["results"]:
        m = r["memory"]
        assert m["category"] and isinstance(m["tags"], list) and m["created_at"] and m["content"]
    claw.call("GET", "/v1/memories/search", q="*", limit=10)

    # agent_end: ≤20 messages with <omem-context> blocks stripped
    injected = (
        "<omem-context>\n- The user lives in Lisbon\n</omem-context>\nPlan my ride to the office"
    )
    raw = [
        {"role": "user", "content": injected},
        {"role": "assistant", "content": "Take the riverside lane to the office in Lisbon"},
    ]
    strip = re.compile(r"<omem-context>[\s\S]*?</omem-context>\s*")
    messages = [{**m, "content": strip.sub("", m["content"])} for m in raw][-20:]
    assert "omem-context" not in messages[0]["content"]
    session = f"ses_{int(time.time() * 1000)}"
    end = claw.call(
        "POST",
        "/v1/memories",
        {"messages": messages, "mode": "smart", "agent_id": "openclaw-auto", "session_id": session},
        expect=202,
    )
    assert end["stored_count"] == 2
    turns = claw.call("GET", "/v1/memories", memory_type="session", limit=50)["memories"]
    assert len(turns) == 2
    for m in turns:
        assert m["agent_id"] == "openclaw-auto" and m["session_id"] == session
        assert "omem-context" not in m["content"]
    by_agent = claw.call(
        "GET", "/v1/memories/search", q="riverside lane office", limit=10, agent_id="openclaw-auto"
    )
    assert by_agent["results"]
    assert {r["memory"]["agent_id"] for r in by_agent["results"]} == {"openclaw-auto"}

    # before_reset: the last 3 user texts, ≤300 chars, role "user", no agent or session
    texts = ["book a bike service", "remind me about the helmet", "y" * 400]
    reset = [{"role": "user", "content": t[:300]} for t in texts[-3:]]
    done = claw.call("POST", "/v1/memories", {"messages": reset, "mode": "smart"}, expect=202)
    assert done["stored_count"] == 3

    # OmemContextEngine.getProfile reads a `profile` string
    profile = claw.call("GET", "/v1/profile")
    assert isinstance(profile["profile"], str) and "Lisbon" in profile["profile"]


def container_tag(kind: str, value: str) -> str:
    return f"omem_{kind}_{hashlib.sha256(value.encode()).hexdigest()[:16]}"


def test_opencode_container_tags(server: RunningServer, alice: TenantClient) -> None:
    code = Plugin(server, alice)
    user, project = container_tag("user", "dev@example.com"), container_tag("project", "/src/app")
    other = container_tag("project", "/src/other")
    assert re.fullmatch(r"omem_user_[0-9a-f]{16}", user)

    def store(content: str, tags: list[str]) -> dict[str, Any]:
        return code.call("POST", "/v1/memories", {"content": content, "tags": tags}, expect=201)

    mine = store("The app builds with vite and pnpm", [user, project, "build"])
    elsewhere = store("The other app builds with webpack and npm", [user, other])
    untagged = store("Builds must pass lint before merge", [])
    assert mine["tags"] == [user, project, "build"]

    # chat.system.transform: first user message, the two container tags, then the profile.
    # The tags do not narrow the search (§4.5): the other project's and untagged memories
    # are the user's too
    container = f"{user},{project}"
    first = code.call(
        "GET", "/v1/memories/search", q="how does the app build", limit=10, tags=container
    )
    ids = [r["memory"]["id"] for r in first["results"]]
    assert ids[0] == mine["id"] and elsewhere["id"] in ids, (ids, untagged["id"])
    for r in first["results"]:
        m = r["memory"]
        assert m["category"] and m["created_at"] and m["content"]
        assert isinstance(r["score"], float)
    assert isinstance(code.call("GET", "/v1/profile")["static_facts"], list)

    # session.compacting: q="*" with the container tags
    compacting = code.call("GET", "/v1/memories/search", q="*", limit=20, tags=container)
    assert isinstance(compacting["results"], list)
    # memoryd's own filter narrows: the user tag alone matches both of the user's projects
    both = code.call("GET", "/v1/memories/search", q="app builds", limit=10, filter_tags=user)
    assert {r["memory"]["id"] for r in both["results"]} == {mine["id"], elsewhere["id"]}


def test_raw_headers_are_what_plugins_send(server: RunningServer, alice: TenantClient) -> None:
    """GETs carry ``Content-Type: application/json`` too; no plugin sends X-Agent-Id."""
    with httpx.Client(base_url=server.url, timeout=30) as raw:
        headers = {"Content-Type": "application/json", "X-API-Key": alice.key}
        response = raw.get("/v1/memories?limit=20&offset=0", headers=headers)
        assert response.status_code == 200 and response.text.startswith('{"memories":[')
        missing = raw.get("/v1/memories?limit=20&offset=0")
        assert missing.status_code == 401  # what `curl -f` turns into a failed hook
        created = raw.post(
            "/v1/memories",
            content='{"content":"Coffee, no sugar","tags":["manual"],"source":"claude-code"}',
            headers=headers,
        )
        assert created.status_code == 201 and created.text.startswith('{"id":"')
        check_memory(created.json())
