"""What host plugins in other languages use: ``/v1/remember``, ``/v1/recall``, and a host's
own checkpoint limits (``limits`` of a save, ``max_chars`` of a restore)."""

from __future__ import annotations

from typing import Any

import httpx
from server_harness import TenantClient


def test_remember_keeps_the_sentences_that_ask_once(alice: TenantClient) -> None:
    said = {
        "text": "Remember that Ana owns the billing service. Do you remember the port?",
        "tags": ["remembered", "opencode"],
        "source": "opencode",
        "session_id": "ses_1",
    }
    for _ in range(2):
        kept = alice.http.post("/v1/remember", json=said, headers={"X-Agent-Id": "opencode:build"})
        assert kept.status_code == 200, kept.text
    body = kept.json()
    assert body["bare"] is False
    rows = alice.http.get("/v1/memories", params={"tags": "remembered"}).json()["memories"]
    assert [(m["content"], m["memory_type"], m["source"], m["agent_id"]) for m in rows] == [
        ("Remember that Ana owns the billing service.", "pinned", "opencode", "opencode:build")
    ]
    bare = alice.http.post("/v1/remember", json={"text": "Please remember this."}).json()
    assert bare == {"memories": [], "bare": True}
    plain = alice.http.post("/v1/remember", json={"text": "What time is it?"}).json()
    assert plain == {"memories": [], "bare": False}


def test_recall_renders_the_fenced_block(alice: TenantClient) -> None:
    alice.http.post("/v1/memories", json={"content": "Prefers pnpm over npm"}).raise_for_status()
    found = alice.http.get("/v1/recall", params={"q": "which package manager, pnpm or npm?"})
    assert found.status_code == 200, found.text
    text = found.json()["text"]
    assert text.startswith("<memoryd-context>") and "Prefers pnpm over npm" in text
    newest = alice.http.get("/v1/recall").json()
    assert "Prefers pnpm over npm" in newest["text"] and newest["count"] == 1
    bad = alice.http.get("/v1/recall", params={"limit": 0})
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "validation_error"


def test_recall_with_nothing_known_is_empty(bob: TenantClient) -> None:
    assert bob.http.get("/v1/recall", params={"q": "anything"}).json() == {"text": "", "count": 0}


def _save(
    client: TenantClient, agent_id: str, events: list[dict[str, Any]], limits: dict[str, int]
) -> httpx.Response:
    """A checkpoint of ``events`` for session "s" of ``agent_id``, under a host's limits."""
    return client.http.post(
        "/v1/checkpoints",
        json={"agent_id": agent_id, "session_id": "s", "events": events, "limits": limits},
    )


def test_a_hosts_limits_apply_to_its_save_and_restore(alice: TenantClient) -> None:
    events: list[dict[str, Any]] = [
        *(
            {"role": r, "content": f"{r} message {i} " + "x" * 80}
            for i in range(4)
            for r in ("user", "assistant")
        ),
        *(
            {"tool": "Write", "arguments": {"file_path": f"f{i}.py"}, "success": True}
            for i in range(4)
        ),
    ]
    limits = {"max_msg_chars": 20, "max_recent_msgs": 1, "max_recent_tools": 2}
    saved = _save(alice, "openclaw:main", events, {**limits, "max_modified_files": 3})
    assert saved.status_code == 201, saved.text
    mechanical = saved.json()["mechanical"]
    exchange = [m["content"][:15] for m in mechanical["recent_messages"]]
    assert exchange == ["user message 3 ", "assistant messa"]  # one exchange, the last
    assert len(mechanical["recent_tools"]) == 2 and len(mechanical["modified_files"]) == 3
    assert len(mechanical["last_user_message"]) <= 20
    wide = alice.http.get("/v1/checkpoints/restore", params={"agent_id": "openclaw:main"})
    cap = len(wide.json()["text"]) - 100
    short = alice.http.get(
        "/v1/checkpoints/restore", params={"agent_id": "openclaw:main", "max_chars": cap}
    ).json()["text"]
    assert short.startswith("<memoryd-context>") and len(short) <= cap
    refused = _save(alice, "a", events, {"max_recent_msgs": 0})
    assert refused.status_code == 422  # a body of the wrong shape
    assert refused.json()["error"]["code"] == "validation_error"
    assert (
        alice.http.get(
            "/v1/checkpoints/restore", params={"agent_id": "a", "max_chars": 10}
        ).status_code
        == 400
    )
