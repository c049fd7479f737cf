"""What every ``memoryd mcp`` must do, whatever its transport and backend.

The test modules subclass ``McpContract`` with fixtures of their own: a
``client`` (one session per module and transport) and ``other_user`` (a
second tenant to share with). The expected schemas are written out from
reference §5.2, not read from the implementation.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from mcp import MCPError
from mcp_harness import McpClient

MISSING_ID = "00000000-0000-4000-8000-000000000000"
STRING, INTEGER, ARRAY = "string", "integer", "array"
# tool: ({property: type}, required)
EXPECTED: dict[str, tuple[dict[str, str], set[str]]] = {
    "lcm_grep": (
        {"conversation_id": STRING, "query": STRING, "limit": "number"},
        {"conversation_id", "query"},
    ),
    "lcm_expand_query": (
        {"conversation_id": STRING, "summary_id": STRING, "query": STRING},
        {"conversation_id"},
    ),
    # memoryd adds the optional scope (docs/continuity.md)
    "memory_store": (
        {"content": STRING, "tags": ARRAY, "source": STRING, "scope": STRING},
        {"content"},
    ),
    "memory_search": (
        {"query": STRING, "limit": INTEGER, "scope": STRING, "tags": ARRAY},
        {"query"},
    ),
    "memory_forget": ({"id": STRING}, {"id"}),
    "memory_get": ({"id": STRING}, {"id"}),
    "memory_update": ({"id": STRING, "content": STRING, "tags": ARRAY}, {"id", "content"}),
    "memory_profile": ({}, set()),
    "memory_list": ({"limit": INTEGER}, set()),
    "memory_ingest": ({"messages": ARRAY, "mode": STRING, "tags": ARRAY}, {"messages"}),
    "memory_stats": ({}, set()),
    "space_create": (
        {"name": STRING, "space_type": STRING, "members": ARRAY},
        {"name", "space_type"},
    ),
    "space_list": ({}, set()),
    "space_add_member": (
        {"space_id": STRING, "user_id": STRING, "role": STRING},
        {"space_id", "user_id", "role"},
    ),
    "memory_share": ({"memory_id": STRING, "target_space": STRING}, {"memory_id", "target_space"}),
    "memory_pull": (
        {"memory_id": STRING, "source_space": STRING, "visibility": STRING},
        {"memory_id", "source_space"},
    ),
    "memory_reshare": ({"memory_id": STRING, "target_space": STRING}, {"memory_id"}),
    # memoryd's own (docs/continuity.md)
    "session_checkpoint": (
        {
            "agent_id": STRING,
            "session_id": STRING,
            "project": STRING,
            "events": ARRAY,
            "trigger": STRING,
        },
        {"agent_id", "session_id", "events"},
    ),
    "session_restore": ({"agent_id": STRING, "project": STRING}, {"agent_id"}),
    # collaboration tasks, the task/{id} scopes (docs/continuity.md)
    "session_layers": ({"agent_id": STRING, "session_id": STRING}, set()),
    "task_list": ({"agent_id": STRING}, set()),
    "task_create": ({"id": STRING, "title": STRING}, set()),
    "task_join": ({"task_id": STRING, "agent_id": STRING}, {"task_id"}),
    "task_leave": ({"task_id": STRING, "agent_id": STRING}, {"task_id"}),
    # OmniRoute's clear, under memoryd's name
    "memory_clear": ({"type": STRING, "olderThan": STRING, "all": "boolean"}, set()),
}


# a call that must fail: (tool, arguments, part of the message the agent reads)
FAILURES: dict[str, tuple[str, dict[str, Any], str]] = {
    "get-unknown-id": ("memory_get", {"id": MISSING_ID}, f"not found: memory {MISSING_ID}"),
    "forget-unknown-id": ("memory_forget", {"id": MISSING_ID}, f"not found: memory {MISSING_ID}"),
    "update-unknown-id": ("memory_update", {"id": MISSING_ID, "content": "x"}, "not found"),
    "share-unknown-id": (
        "memory_share",
        {"memory_id": MISSING_ID, "target_space": "team/x"},
        "not found",
    ),
    "reshare-unknown-id": ("memory_reshare", {"memory_id": MISSING_ID}, "not found"),
    "checkpoint-bad-event": (
        "session_checkpoint",
        {"agent_id": "a", "session_id": "s", "events": [{"role": "robot", "content": "x"}]},
        "role 'user' or 'assistant'",
    ),
    "pull-unknown-space": (
        "memory_pull",
        {"memory_id": MISSING_ID, "source_space": "team/x"},
        "not found",
    ),
    "add-member-unknown-space": (
        "space_add_member",
        {"space_id": "team/x", "user_id": "u", "role": "reader"},
        "not found",
    ),
    "store-blank": (
        "memory_store",
        {"content": "   "},
        "validation error: content cannot be empty",
    ),
    "search-blank": ("memory_search", {"query": " "}, "validation error"),
    "store-no-content": ("memory_store", {}, "invalid arguments: 'content' is a required property"),
    "store-extra-argument": (
        "memory_store",
        {"content": "x", "colour": "red"},
        "'colour' was unexpected",
    ),
    "get-id-not-string": (
        "memory_get",
        {"id": 7},
        "invalid arguments: id: 7 is not of type 'string'",
    ),
    "search-limit-too-small": (
        "memory_search",
        {"query": "x", "limit": 0},
        "limit: 0 is less than the minimum of 1",
    ),
    "list-limit-too-big": (
        "memory_list",
        {"limit": 101},
        "limit: 101 is greater than the maximum of 100",
    ),
    "list-limit-not-integer": ("memory_list", {"limit": "ten"}, "is not of type 'integer'"),
    "ingest-message-without-content": (
        "memory_ingest",
        {"messages": [{"role": "user"}]},
        "messages.0: 'content' is a required",
    ),
    "ingest-unknown-mode": (
        "memory_ingest",
        {"messages": [], "mode": "fast"},
        "mode: 'fast' is not one of",
    ),
    "create-personal-space": (
        "space_create",
        {"name": "n", "space_type": "personal"},
        "space_type: 'personal' is not",
    ),
    "clear-nothing-named": ("memory_clear", {}, "name a type or olderThan"),
    "clear-unknown-type": ("memory_clear", {"type": "spatial"}, "type: 'spatial' is not one of"),
    "clear-bad-time": ("memory_clear", {"olderThan": "last week"}, "olderThan must be"),
    "add-member-unknown-role": (
        "space_add_member",
        {"space_id": "s", "user_id": "u", "role": "owner"},
        "role: 'owner'",
    ),
}


def unique(text: str) -> str:
    """A content no other test of the module stores (they share one store)."""
    return f"{text} (#{uuid.uuid4().hex[:6]})"


class McpContract:
    def test_the_tools_have_the_reference_names_and_schemas(self, client: McpClient) -> None:
        tools = {t.name: t for t in client.tools()}
        assert set(tools) == set(EXPECTED)
        for name, (properties, required) in EXPECTED.items():
            schema = tools[name].input_schema
            assert schema["type"] == "object", name
            assert {p: s["type"] for p, s in schema["properties"].items()} == properties, name
            assert set(schema.get("required", [])) == required, name
            assert "Use it" in (tools[name].description or ""), name
        props = {n: t.input_schema["properties"] for n, t in tools.items()}
        assert (
            props["memory_search"]["limit"]["minimum"],
            props["memory_search"]["limit"]["maximum"],
        ) == (1, 50)
        assert (
            props["memory_list"]["limit"]["minimum"],
            props["memory_list"]["limit"]["maximum"],
        ) == (1, 100)
        assert props["memory_ingest"]["mode"]["enum"] == ["smart", "raw"]
        assert set(props["memory_ingest"]["messages"]["items"]["required"]) == {"role", "content"}
        assert props["space_create"]["space_type"]["enum"] == ["team", "organization"]
        assert props["space_add_member"]["role"]["enum"] == ["admin", "member", "reader"]
        member = props["space_create"]["members"]["items"]
        assert member["properties"]["role"]["enum"] == ["admin", "member", "reader"]
        assert tools["memory_forget"].annotations.destructive_hint is True  # type: ignore[union-attr]
        assert tools["memory_search"].annotations.read_only_hint is True  # type: ignore[union-attr]
        assert tools["memory_clear"].annotations.destructive_hint is True  # type: ignore[union-attr]

    def test_session_checkpoint_and_restore(self, client: McpClient) -> None:
        agent = unique("mcp-agent").replace(" ", "")
        saved = client.ok(
            "session_checkpoint",
            agent_id=agent,
            session_id="s1",
            project="/repo",
            events=[
                {"role": "user", "content": "Add CSV export"},
                {"tool": "Write", "arguments": {"file_path": "export.py"}, "success": True},
            ],
        )
        assert saved["saves"] == 1 and saved["mechanical"]["modified_files"] == ["export.py"]
        text = client.text("session_restore", agent_id=agent, project="/repo")
        assert "Goal: Add CSV export (derived)" in text and "Modified files: export.py" in text
        nothing = client.text("session_restore", agent_id=agent, project="/other")
        assert nothing == "No checkpoint saved for this agent yet."

    def test_store_get_search_update_forget(self, client: McpClient) -> None:
        content = unique("The user's favourite programming language is Rust")
        stored = client.ok("memory_store", content=content, tags=["lang"])
        assert stored["content"] == content and stored["tags"] == ["lang"]
        assert stored["source"] == "mcp" and stored["category"] == "preferences"
        said = client.text("memory_store", content=unique("Tabs, not spaces"))
        assert said.startswith("Memory stored (id: ") and "Tabs, not spaces" in said
        assert client.ok("memory_get", id=stored["id"])["content"] == content

        found = client.ok("memory_search", query="which language does the user like to code in")
        assert stored["id"] in [r["memory"]["id"] for r in found["results"]]
        text = client.text("memory_search", query="programming language", tags=["lang"])
        assert stored["id"] in text and "score" in text and "lang" in text
        assert client.ok("memory_search", query="Rust", tags=["no-such-tag"])["results"] == []

        changed = unique("The user's favourite programming language is now Zig")
        updated = client.ok("memory_update", id=stored["id"], content=changed, tags=["lang", "v2"])
        assert (updated["content"], updated["tags"]) == (changed, ["lang", "v2"])
        assert client.ok("memory_get", id=stored["id"])["content"] == changed

        assert client.ok("memory_forget", id=stored["id"])["status"] == "deleted"
        found = client.ok("memory_search", query="favourite programming language Zig", limit=50)
        assert stored["id"] not in [r["memory"]["id"] for r in found["results"]]

    def test_list_ingest_stats_and_profile(self, client: McpClient) -> None:
        fact = unique("The user lives in Lisbon and prefers the metric system")
        stored = client.ok("memory_store", content=fact, source="test")
        listed = client.ok("memory_list", limit=1)
        assert [m["id"] for m in listed["memories"]] == [stored["id"]]
        assert listed["total_count"] >= 1
        assert stored["id"] in client.text("memory_list")

        raw = client.ok(
            "memory_ingest",
            messages=[
                {"role": "user", "content": unique("I am planning a trip to Kyoto in April")},
                {"role": "assistant", "content": "Noted: Kyoto in April."},
            ],
            mode="raw",
            tags=["travel"],
        )
        assert raw["stored_count"] == 2 and raw["task_id"]
        smart = client.ok(
            "memory_ingest", messages=[{"role": "user", "content": unique("I drink green tea")}]
        )
        assert smart["task_id"] and smart["stored_count"] == 1

        stats = client.ok("memory_stats")
        assert stats["total"] >= 1 and "by_category" in stats

        profile = client.ok("memory_profile")
        assert fact in profile["static_facts"]
        assert fact in json.loads(client.resource("omem://profile"))["static_facts"]

    def test_sharing_tools(self, client: McpClient, other_user: str) -> None:
        space = client.ok("space_create", name="MCP team", space_type="team")
        assert space["id"].startswith("team/") and space["space_type"] == "team"
        listed = client.ok("space_list")["spaces"]
        assert space["id"] in [s["id"] for s in listed]
        assert any(s["space_type"] == "personal" for s in listed)
        with_member = client.ok(
            "space_add_member", space_id=space["id"], user_id=other_user, role="member"
        )
        assert {"user_id": other_user, "role": "member"}.items() <= next(
            m for m in with_member["members"] if m["user_id"] == other_user
        ).items()
        again = client.fail(
            "space_add_member", space_id=space["id"], user_id=other_user, role="reader"
        )
        assert "already a member" in again
        org = client.ok(
            "space_create",
            name="MCP org",
            space_type="organization",
            members=[{"user_id": other_user, "role": "reader"}],
        )
        assert org["id"].startswith("org/") and other_user in [m["user_id"] for m in org["members"]]

        original = client.ok("memory_store", content=unique("Deploys happen on Fridays"))
        copy = client.ok("memory_share", memory_id=original["id"], target_space=space["id"])
        assert copy["space_id"] == space["id"] and copy["id"] != original["id"]
        assert copy["provenance"]["shared_from_memory"] == original["id"]
        same = client.ok("memory_share", memory_id=original["id"], target_space=space["id"])
        assert same["id"] == copy["id"]

        newer = unique("Deploys happen on Thursdays")
        client.ok("memory_update", id=original["id"], content=newer)
        fresh = client.ok("memory_reshare", memory_id=copy["id"])
        assert fresh["content"] == newer and fresh["id"] != copy["id"]
        assert fresh["space_id"] == space["id"]

        pulled = client.ok("memory_pull", memory_id=fresh["id"], source_space=space["id"])
        assert pulled["content"] == newer and pulled["visibility"] == "private"
        assert pulled["provenance"]["shared_from_memory"] == fresh["id"]
        shown = client.ok(
            "memory_pull", memory_id=fresh["id"], source_space=space["id"], visibility="global"
        )
        assert shown["visibility"] == "global"

    @pytest.mark.parametrize(("tool", "arguments", "expected"), FAILURES.values(), ids=FAILURES)
    def test_failures_are_tool_errors_with_a_clear_message(
        self, client: McpClient, tool: str, arguments: dict[str, Any], expected: str
    ) -> None:
        message = client.fail(tool, **arguments)
        assert message.startswith(f"{tool} failed: ")
        assert expected in message

    def test_the_session_outlives_errors_and_unknown_names(self, client: McpClient) -> None:
        with pytest.raises(MCPError, match="unknown tool: memory_delete"):
            client.call("memory_delete", id=MISSING_ID)
        with pytest.raises(MCPError, match="unknown resource"):
            client.resource("omem://nothing")
        resources = client.portal.call(client.session.list_resources).resources
        assert [(r.uri, r.mime_type) for r in resources] == [("omem://profile", "application/json")]
        assert client.ok("memory_list")["limit"] == 20

    def test_clear_by_type_and_age(self, client: McpClient) -> None:
        """Last in the class: it deletes the factual memories the module's tests stored."""
        stored = client.ok("memory_store", content=unique("The user prefers tabs"))
        assert client.ok("memory_clear", type="episodic", olderThan="2000-01-01") == {"deleted": 0}
        assert client.ok("memory_get", id=stored["id"])["content"] == stored["content"]
        later = "2999-01-01T00:00:00Z"
        assert client.ok("memory_clear", type="factual", olderThan=later)["deleted"] >= 1
        assert client.ok("memory_get", id=stored["id"])["state"] == "deleted"
