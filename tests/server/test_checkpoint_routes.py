"""``/v1/checkpoints`` on a real server: save, list, get, restore, and a hook's remote backend."""

from __future__ import annotations

from pathlib import Path

from server_harness import RunningServer, TenantClient

from memoryd.continuity import Message, Owner, ToolResult, ToolUse
from memoryd.hooks.backend import RemoteBackend

EVENTS = [
    {"role": "user", "content": "Port the invoice exporter to CSV"},
    {"role": "assistant", "content": "Writing exporter.py next."},
    {"tool": "Write", "arguments": {"file_path": "exporter.py", "content": "..."}, "success": True},
]


def test_save_list_get_and_restore(alice: TenantClient) -> None:
    saved = alice.http.post(
        "/v1/checkpoints",
        json={"session_id": "s1", "project": "/repo", "events": EVENTS, "trigger": "agent_end"},
        headers={"X-Agent-Id": "coder"},
    )
    assert saved.status_code == 201, saved.text
    body = saved.json()
    assert (body["agent_id"], body["session_id"], body["project"]) == ("coder", "s1", "/repo")
    assert body["mechanical"]["modified_files"] == ["exporter.py"]
    assert body["summary"]["source"] == "derived" and "goal" in body["summary"]["derived"]

    listed = alice.http.get("/v1/checkpoints", params={"agent_id": "coder"}).json()
    assert [c["id"] for c in listed["checkpoints"]] == [body["id"]]
    got = alice.http.get(f"/v1/checkpoints/{body['id']}").json()
    assert "Modified files: exporter.py" in got["rendered"]

    restored = alice.http.get(
        "/v1/checkpoints/restore", params={"agent_id": "coder", "project": "/repo"}
    ).json()
    assert restored["checkpoint_id"] == body["id"]
    assert restored["text"].startswith("<memoryd-context>")
    assert "Goal: Port the invoice exporter to CSV (derived)" in restored["text"]
    other = alice.http.get("/v1/checkpoints/restore", params={"agent_id": "coder", "project": "/x"})
    assert other.json() == {"text": "", "checkpoint_id": None}


def test_tenants_never_see_each_others_checkpoints(alice: TenantClient, bob: TenantClient) -> None:
    body = alice.http.post(
        "/v1/checkpoints", json={"agent_id": "a", "session_id": "s", "events": EVENTS}
    ).json()
    assert bob.http.get("/v1/checkpoints").json() == {"checkpoints": []}
    missing = bob.http.get(f"/v1/checkpoints/{body['id']}")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"
    assert bob.http.delete(f"/v1/checkpoints/{body['id']}").status_code == 404
    assert alice.http.delete(f"/v1/checkpoints/{body['id']}").status_code == 200


def test_bad_input_is_a_validation_error(alice: TenantClient) -> None:
    cases = [
        {"session_id": "s", "events": EVENTS},  # no agent anywhere
        {"agent_id": "a", "session_id": "s", "events": [{"role": "robot", "content": "x"}]},
        {"agent_id": "a", "session_id": "s", "events": [{"tool": "Edit", "arguments": "x"}]},
        {"agent_id": "a", "session_id": "s", "events": EVENTS, "trigger": "whenever"},
        {"agent_id": "a", "session_id": " ", "events": EVENTS},
    ]
    for body in cases:
        answer = alice.http.post("/v1/checkpoints", json=body)
        assert answer.status_code == 400, (body, answer.text)
        assert answer.json()["error"]["code"] == "validation_error"
    assert alice.http.get("/v1/checkpoints").json() == {"checkpoints": []}


def test_the_hooks_remote_backend_saves_and_restores(
    server: RunningServer, alice: TenantClient, tmp_path: Path
) -> None:
    backend = RemoteBackend(server.url, alice.key, timeout_s=5)
    try:
        events = [
            Message("user", "Rename the billing module"),
            ToolUse("Edit", {"file_path": "billing/__init__.py"}, "t1"),
            ToolResult("t1", False),
        ]
        checkpoint_id = backend.save_checkpoint(Owner("claude-code", "s9", "/repo"), events, "tool")
        backend.summarize_checkpoint(checkpoint_id)  # no LLM on the server: unchanged
        text = backend.restore("claude-code", "/repo")
    finally:
        backend.close()
    assert '  - Edit({"file_path": "billing/__init__.py"}) → Failed' in text
    assert "Modified files: billing/__init__.py" in text
