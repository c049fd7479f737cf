"""The ourmem plugins' flows end to end, sent as the plugins send them (reference §5).

Where ``test_plugins`` checks each call's shape, these follow what a user of
the plugins gets across calls: OpenCode recalls what the other doors wrote,
a hook that resends its turns stores them once, tool output and injected
context never come back as memory, and no bookkeeping tag reaches a prompt.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from server_harness import accept_invitation, completed_task
from test_plugins import Plugin, container_tag

from memoryd import AsyncRemoteMemory, RemoteMemory
from memoryd.ingest.reconcile import NEGATIVE_MARK, SLOT_MARK_PREFIX, VALUE_MARK_PREFIX
from memoryd.inject import render_context
from memoryd.mcp.backend import RemoteBackend

if TYPE_CHECKING:
    from server_harness import RunningServer, TenantClient

INTERNAL = (SLOT_MARK_PREFIX, VALUE_MARK_PREFIX, NEGATIVE_MARK)
TASK_TIMEOUT_S = 60


def omem_context(results: list[dict[str, Any]]) -> str:
    """The block the OpenCode and OpenClaw plugins inject (``buildContextBlock``)."""
    lines = []
    for r in results:
        m = r["memory"]
        tags = f" [{', '.join(m['tags'])}]" if m["tags"] else ""
        lines.append(f"  - (just now{tags}) {m['content'][:500]}")
    return "\n".join(
        [
            "<omem-context>",
            "Treat every memory below as historical context only.",
            "Do not repeat these memories verbatim unless asked.",
            "",
            "[Preferences]",
            *lines,
            "</omem-context>",
        ]
    )


def search(client: Plugin, q: str, **params: Any) -> list[dict[str, Any]]:
    results: list[dict[str, Any]] = client.call("GET", "/v1/memories/search", q=q, **params)[
        "results"
    ]
    return results


def ids(results: list[dict[str, Any]]) -> list[str]:
    return [r["memory"]["id"] for r in results]


def settled(server: RunningServer) -> None:
    """Every turn answered with a 202 has its vector: found by meaning from now on."""
    assert server.service.engine.embed_queue().wait_idle(TASK_TIMEOUT_S)


def wait_task(client: Plugin, task_id: str) -> dict[str, Any]:
    return completed_task(lambda: client.call("GET", f"/v1/tasks/{task_id}"), TASK_TIMEOUT_S)


def all_tags(value: Any) -> Iterator[str]:
    """Every string in every ``tags`` list anywhere in a response body."""
    if isinstance(value, list):
        for v in value:
            yield from all_tags(v)
    elif isinstance(value, dict):
        for key, v in value.items():
            if key == "tags" and isinstance(v, list):
                yield from (t for t in v if isinstance(t, str))
            else:
                yield from all_tags(v)


def test_opencode_recall_finds_what_every_door_wrote(
    server: RunningServer, alice: TenantClient, bob: TenantClient
) -> None:
    code, cc, claw = Plugin(server, alice), Plugin(server, alice), Plugin(server, alice)
    mate = Plugin(server, bob)
    user = container_tag("user", "dev@example.com")
    project = container_tag("project", "/src/shop")
    container = f"{user},{project}"

    # Claude Code's memory-store skill, MCP memory_store, OpenClaw agent_end
    skill = cc.call(
        "POST",
        "/v1/memories",
        {"content": "The shop deploys with Fly.io on every tag", "tags": ["manual"]},
        expect=201,
    )
    mcp = cc.call(
        "POST",
        "/v1/memories",
        {"content": "The shop database is Postgres 16", "tags": [], "source": "mcp"},
        expect=201,
    )
    claw.call(
        "POST",
        "/v1/memories",
        {
            "messages": [{"role": "user", "content": "The shop checkout uses Stripe webhooks"}],
            "mode": "smart",
            "agent_id": "openclaw-auto",
            "session_id": "ses_1700000000000",
        },
        expect=202,
    )
    # a teammate's share into a team space alice accepted
    team = mate.call("POST", "/v1/spaces", {"name": "shop", "space_type": "team"}, expect=201)
    mate.call(
        "POST",
        f"/v1/spaces/{team['id'].replace('/', '%2F')}/members",
        {"user_id": alice.id, "role": "member"},
    )
    accept_invitation(alice, team["id"])
    shared = mate.call(
        "POST",
        "/v1/memories",
        {"content": "The shop staging URL is staging.shop.test", "tags": ["ops"]},
        expect=201,
    )
    mate.call("POST", f"/v1/memories/{shared['id']}/share", {"target_space": team["id"]}, 201)

    settled(server)
    # OpenCode's system.transform: the first message and its container tags on every search
    for q, want in (
        ("how does the shop deploy", skill["id"]),
        ("which database does the shop use", mcp["id"]),
        ("shop staging URL", None),
        ("shop checkout payments", None),
    ):
        found = search(code, q, limit=10, tags=container)
        assert found, q
        if want is not None:
            assert found[0]["memory"]["id"] == want, (q, found[0]["memory"]["content"])
    staging = search(code, "shop staging URL", limit=10, tags=container)
    copy = [r["memory"] for r in staging if "staging.shop.test" in r["memory"]["content"]]
    assert [m["space_id"] for m in copy] == [team["id"]], staging
    checkout = search(code, "shop checkout payments", limit=10, tags=container)
    assert "Stripe webhooks" in checkout[0]["memory"]["content"]
    # session.compacting: q="*" with the tags still answers
    assert isinstance(search(code, "*", limit=20, tags=container), list)


def test_opencode_update_with_tags_keeps_the_memory_recallable(
    server: RunningServer, alice: TenantClient
) -> None:
    code = Plugin(server, alice)
    user = container_tag("user", "ops@example.com")
    project = container_tag("project", "/src/api")
    container = f"{user},{project}"
    stored = code.call(
        "POST",
        "/v1/memories",
        {"content": "The API rate limit is 100 requests a minute", "tags": [user, project]},
        expect=201,
    )
    assert ids(search(code, "API rate limit", limit=10, tags=container))[0] == stored["id"]
    # memory_update with tags: the container tags are replaced by the given ones
    updated = code.call(
        "PUT",
        f"/v1/memories/{stored['id']}",
        {"content": "The API rate limit is 300 requests a minute", "tags": ["limits"]},
    )
    assert updated["tags"] == ["limits"]
    found = search(code, "API rate limit", limit=10, tags=container)
    assert ids(found)[0] == stored["id"]
    assert "300 requests" in found[0]["memory"]["content"]


def test_a_stop_hook_sent_three_times_stores_its_turns_once(
    server: RunningServer, alice: TenantClient
) -> None:
    cc = Plugin(server, alice)
    turns = [
        {"role": "user", "content": "We are migrating the billing service to Rust"},
        {"role": "assistant", "content": "Noted: billing moves from Go to Rust this quarter"},
        {"role": "user", "content": "The billing migration deadline is March 3rd"},
        {"role": "assistant", "content": "I will plan the billing migration around March 3rd"},
        {"role": "user", "content": "Billing owner is Priya from the payments team"},
        {"role": "assistant", "content": "Priya owns billing; I will loop her in"},
    ]
    body = {
        "messages": turns,
        "mode": "smart",
        "tags": ["auto-captured", "claude-code"],
        "source": "claude-code",
    }
    counts = [cc.call("POST", "/v1/memories", body, expect=202)["stored_count"] for _ in range(3)]
    assert counts == [6, 0, 0]
    # MCP memory_ingest (no session, undefined keys dropped) and OpenClaw before_reset resend
    again = {"messages": turns[-2:], "mode": "smart", "tags": ["mcp-ingest"]}
    assert cc.call("POST", "/v1/memories", again, expect=202)["stored_count"] == 0
    reset = [{"role": "user", "content": t["content"][:300]} for t in turns if t["role"] == "user"]
    assert cc.call("POST", "/v1/memories", {"messages": reset}, expect=202)["stored_count"] == 0

    stored = cc.call("GET", "/v1/memories", memory_type="session", limit=100)
    assert stored["total_count"] == 6
    assert len({m["content"] for m in stored["memories"]}) == 6
    # a new turn after the repeats is stored, once
    more = {**body, "messages": [*turns, {"role": "user", "content": "Also billing needs SOC2"}]}
    assert cc.call("POST", "/v1/memories", more, expect=202)["stored_count"] == 1
    settled(server)
    found = search(cc, "billing migration Rust deadline owner", limit=10)
    contents = [r["memory"]["content"] for r in found]
    assert len(contents) == len(set(contents)), contents


def test_copies_stored_in_separate_sessions_do_not_crowd_results(
    server: RunningServer, alice: TenantClient
) -> None:
    cc = Plugin(server, alice)
    line = {"role": "user", "content": "The office wifi password rotates every Monday"}
    for n in range(5):  # five sessions said the same words
        cc.call("POST", "/v1/memories", {"messages": [line], "session_id": f"s{n}"}, expect=202)
    other = "The office printer is on the third floor near the wifi router"
    cc.call("POST", "/v1/memories", {"messages": [{"role": "user", "content": other}]}, 202)
    settled(server)
    found = search(cc, "office wifi password", limit=10)
    contents = [r["memory"]["content"] for r in found]
    assert contents.count(f"user: {line['content']}") == 1, contents
    assert f"user: {other}" in contents


def test_a_tool_result_never_outranks_what_the_user_said(
    server: RunningServer, alice: TenantClient
) -> None:
    claw = Plugin(server, alice)
    restaurants = (
        "Search results for restaurants near you with food allergies options: "
        "1. Green Fork (food allergies menu, nut-free, gluten-free) "
        "2. Allergy Safe Diner (food allergies friendly) 3. Pasta Bar (allergies on request)"
    )
    end = claw.call(
        "POST",
        "/v1/memories",
        {
            "messages": [
                {"role": "user", "content": "My partner is allergic to peanuts"},
                {"role": "assistant", "content": "I will look for peanut-free restaurants"},
                {"role": "toolResult", "content": restaurants},
                {"role": "assistant", "content": "Green Fork has a nut-free menu"},
            ],
            "mode": "smart",
            "agent_id": "openclaw-auto",
            "session_id": "ses_1700000000001",
        },
        expect=202,
    )
    assert end["stored_count"] == 4  # nothing is lost: the tool output is stored too
    settled(server)
    # before_prompt_build: q = prompt[:500], limit 10, no tags
    found = search(claw, "food allergies", limit=10)
    contents = [r["memory"]["content"] for r in found]
    assert "user: My partner is allergic to peanuts" in contents, contents
    assert not any(c.startswith("toolResult:") for c in contents), contents
    # kept, and found when asked for
    asked = search(claw, "food allergies restaurants", limit=10, include_tool_output="true")
    assert any(r["memory"]["content"].startswith("toolResult:") for r in asked)
    listed = claw.call("GET", "/v1/memories", memory_type="session", limit=100)["memories"]
    tool = [m for m in listed if m["content"].startswith("toolResult:")]
    assert len(tool) == 1 and tool[0]["marks"] == ["tool-output"] and tool[0]["tags"] == []


def test_the_current_session_is_left_out_when_the_request_names_it(
    server: RunningServer, alice: TenantClient
) -> None:
    claw = Plugin(server, alice)
    earlier = {"role": "user", "content": "I keep my climbing gear in the garage"}
    claw.call("POST", "/v1/memories", {"messages": [earlier], "session_id": "ses_old"}, 202)
    now = [
        {"role": "user", "content": "Where is my climbing gear?"},
        {"role": "assistant", "content": "Let me check where your climbing gear is"},
    ]
    claw.call("POST", "/v1/memories", {"messages": now, "session_id": "ses_now"}, 202)
    settled(server)
    everything = search(claw, "climbing gear", limit=10)
    assert {r["memory"]["session_id"] for r in everything} == {"ses_old", "ses_now"}
    recall = search(claw, "climbing gear", limit=10, exclude_session="ses_now")
    assert {r["memory"]["session_id"] for r in recall} == {"ses_old"}
    assert f"user: {earlier['content']}" in [r["memory"]["content"] for r in recall]


def test_injected_context_sent_back_is_never_stored_or_found(
    server: RunningServer, alice: TenantClient
) -> None:
    claw, cc = Plugin(server, alice), Plugin(server, alice)
    sam = claw.call(
        "POST", "/v1/memories", {"content": "Sam lives in Porto", "tags": ["people"]}, 201
    )
    # before_prompt_build: recall, and inject the block into the prompt
    block = omem_context(search(claw, "Where does Sam live? Porto or Berlin startup", limit=10))
    assert "Sam lives in Porto" in block
    # the fact changes, then is deleted
    claw.call("PUT", f"/v1/memories/{sam['id']}", {"content": "Sam moved to Berlin for a startup"})
    claw.call("DELETE", f"/v1/memories/{sam['id']}")

    # before_reset: the last user texts, ≤300 chars, the block still in them (its end cut off)
    prompt = f"{block}\nAsk Sam about the Berlin startup idea"
    reset = [{"role": "user", "content": prompt[:300]}, {"role": "user", "content": block[:300]}]
    claw.call("POST", "/v1/memories", {"messages": reset, "mode": "smart"}, expect=202)
    # agent_end with a whole block, and memoryd's own fence sent back by a hook
    fenced = render_context([{"content": "Sam lives in Porto", "category": "profile"}])
    assert fenced.startswith("<memoryd-context>")
    messages = [
        {"role": "user", "content": f"{block}\n\nWhat should I ask Sam?"},
        {"role": "assistant", "content": "Ask Sam how the startup is going"},
        {"role": "user", "content": f"{fenced}\nthanks"},
        {"role": "user", "content": "<relevant-memories>Sam lives in Porto</relevant-memories>"},
        {"role": "user", "content": "<supermemory-context>Sam: Porto</supermemory-context>"},
    ]
    claw.call(
        "POST",
        "/v1/memories",
        {"messages": messages, "mode": "smart", "agent_id": "openclaw-auto", "session_id": "s9"},
        expect=202,
    )
    cc.call(
        "POST",
        "/v1/memories",
        {"content": f"{fenced}", "tags": ["manual"], "source": "claude-code"},
        expect=400,
    )

    settled(server)
    turns = claw.call("GET", "/v1/memories", memory_type="session", limit=100)["memories"]
    text = "\n".join(m["content"] for m in turns)
    for marker in ("omem-context", "memoryd-context", "relevant-memories", "Porto"):
        assert marker not in text, (marker, text)
    assert "user: Ask Sam about the Berlin startup idea" in text
    for q in ("Porto Berlin startup", "Sam lives in Porto", "Where does Sam live"):
        found = search(claw, q, limit=10)
        assert not any("Porto" in r["memory"]["content"] for r in found), (q, found)


def test_no_bookkeeping_tag_reaches_any_response(
    server: RunningServer, alice: TenantClient
) -> None:
    cc = Plugin(server, alice)
    said = [
        {"role": "user", "content": "I prefer pnpm over npm for every project"},
        {"role": "user", "content": "I live in Lisbon"},
        {"role": "user", "content": "I don't like coffee"},
    ]
    body = {"messages": said, "mode": "smart", "tags": ["auto-captured", "claude-code"]}
    task = wait_task(cc, cc.call("POST", "/v1/memories", body, expect=202)["task_id"])
    assert task["facts_extracted"] >= 2, task
    bodies = [
        cc.call("GET", "/v1/memories", limit=100),
        cc.call("GET", "/v1/memories", limit=100, memory_type="insight"),
        cc.call("GET", "/v1/memories/search", q="pnpm package manager", limit=10),
        cc.call("GET", "/v1/memories/search", q="where do I live", limit=10),
        cc.call("GET", "/v1/profile", q="coffee"),
    ]
    insights = bodies[1]["memories"]
    assert insights, bodies[0]
    bodies += [cc.call("GET", f"/v1/memories/{m['id']}") for m in insights]
    tags = [t for b in bodies for t in all_tags(b)]
    assert "auto-captured" in tags
    assert not [t for t in tags if t.startswith(INTERNAL)], tags
    # the bookkeeping is kept, in its own field
    marks = [mark for m in insights for mark in m["marks"]]
    assert any(mark.startswith(SLOT_MARK_PREFIX) for mark in marks), insights
    # a later change still finds the fact it replaces by its marks
    moved = {"messages": [{"role": "user", "content": "I moved to Porto"}], "mode": "smart"}
    wait_task(cc, cc.call("POST", "/v1/memories", moved, expect=202)["task_id"])
    settled(server)
    where = search(cc, "where does the user live", limit=10)
    assert "Porto" in where[0]["memory"]["content"], where[0]


def test_memoryds_own_doors_still_filter_by_tags(
    server: RunningServer, alice: TenantClient
) -> None:
    """The SDKs and the MCP server send their tag filter as ``filter_tags``."""
    with RemoteMemory(server.url, alice.key) as remote:
        work = remote.add("The standup is at 9:30 every weekday", tags=["work", "meetings"])
        home = remote.add("The book club meets at 9:30 on Sundays", tags=["home"])
        found = remote.search("meets at 9:30", tags=["work"])
        assert [r.memory.id for r in found] == [work.id]
        assert {r.memory.id for r in remote.search("meets at 9:30")} == {work.id, home.id}

    async def async_search() -> list[str]:
        async with AsyncRemoteMemory(server.url, alice.key) as remote:
            return [r.memory.id for r in await remote.search("meets at 9:30", tags=["home"])]

    assert asyncio.run(async_search()) == [home.id]
    mcp = RemoteBackend(server.url, alice.key)
    both = mcp.search("meets at 9:30", 10, None, ["work", "meetings"])
    assert [r["memory"]["id"] for r in both["results"]] == [work.id]
    mcp.remote.close()
