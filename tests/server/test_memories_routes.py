"""Memory routes over HTTP (reference §4.3–4.11), each with its error cases."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import httpx
import pytest

if TYPE_CHECKING:
    from server_harness import TenantClient

NOTES = [
    "I prefer dark roast coffee in the morning",
    "My sister lives in Lisbon",
    "The project deadline is on Friday",
]


def _add(t: TenantClient, content: str, **fields: object) -> dict[str, object]:
    response = t.http.post("/v1/memories", json={"content": content, **fields})
    assert response.status_code == 201, response.text
    body: dict[str, object] = response.json()
    return body


def _error(response: httpx.Response, status: int, code: str, words: str = "") -> None:
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert error["code"] == code
    assert words in error["message"]


def _finished(t: TenantClient, task_id: str) -> dict[str, Any]:
    """The task once the background worker is done with it."""
    deadline = time.monotonic() + 60
    while True:
        task: dict[str, Any] = t.http.get(f"/v1/tasks/{task_id}").json()
        if task["status"] in ("completed", "failed") or time.monotonic() > deadline:
            return task
        time.sleep(0.05)


def test_direct_create_returns_the_full_memory(alice: TenantClient) -> None:
    response = alice.http.post(
        "/v1/memories",
        json={"content": NOTES[0], "tags": ["coffee"], "source": "cli", "category": "preferences"},
        headers={"X-Agent-Id": "agent-7"},
    )
    assert response.status_code == 201
    assert response.text.startswith('{"id":"')
    memory = response.json()
    assert memory["content"] == memory["l2_content"] == NOTES[0]
    assert memory["memory_type"] == "pinned" and memory["state"] == "active"
    assert memory["tags"] == ["coffee"] and memory["source"] == "cli"
    assert memory["agent_id"] == "agent-7" and memory["tenant_id"] == alice.id
    assert memory["version"] == 1
    created = memory["created_at"]
    assert created.endswith("+00:00") and len(created.split(".")[1]) == 6 + len("+00:00")


def test_direct_create_errors(alice: TenantClient) -> None:
    _error(alice.http.post("/v1/memories", json={}), 400, "validation_error", "either")
    _error(alice.http.post("/v1/memories", json={"content": " "}), 400, "validation_error", "empty")
    _error(alice.http.post("/v1/memories", json={"content": 7}), 422, "validation_error")
    _error(
        alice.http.post("/v1/memories", json={"content": "x", "importance": 3}),
        400,
        "validation_error",
    )
    _error(
        alice.http.post("/v1/memories", json={"content": "x", "category": "nope"}),
        400,
        "validation_error",
        "unknown category",
    )
    # nothing of the refused requests was stored
    assert alice.http.get("/v1/memories").json()["total_count"] == 0


def test_conversation_ingest_is_searchable_at_once_with_a_task(alice: TenantClient) -> None:
    messages = [
        {"role": "user", "content": "I adopted a greyhound named Pixel"},
        {"role": "assistant", "content": "Congratulations on the new dog!"},
    ]
    response = alice.http.post(
        "/v1/memories",
        json={"messages": messages, "session_id": "s-1", "tags": ["chat"], "source": "hook"},
    )
    assert response.status_code == 202
    body = response.json()
    assert body["stored_count"] == 2 and body["session_id"] == "s-1"
    task = _finished(alice, body["task_id"])
    assert task["status"] == "completed" and task["mode"] == "smart"
    assert task["messages_received"] == 2 and task["extractor"] == "rules"
    hits = alice.http.get("/v1/memories/search", params={"q": "greyhound Pixel"}).json()
    top = hits["results"][0]["memory"]
    assert "Pixel" in top["content"] and top["memory_type"] == "session"
    assert top["tags"] == ["chat"] and top["source"] == "hook"
    # the same messages again in the same session are not stored twice
    again = alice.http.post("/v1/memories", json={"messages": messages, "session_id": "s-1"})
    assert again.json()["stored_count"] == 0


def test_ingest_errors(alice: TenantClient) -> None:
    _error(alice.http.post("/v1/memories", json={"messages": []}), 400, "validation_error", "empty")
    _error(
        alice.http.post("/v1/memories", json={"messages": [{"role": "user"}]}),
        422,
        "validation_error",
    )
    _error(alice.http.get("/v1/tasks/no-such-task"), 404, "not_found")


def test_list_filters_sorts_and_pages(alice: TenantClient) -> None:
    for i, note in enumerate(NOTES):
        _add(alice, note, tags=["n", f"t{i}"], importance=0.2 + 0.3 * i, category="events")
    alice.http.post("/v1/memories", json={"messages": [{"role": "user", "content": "hello"}]})
    page = alice.http.get("/v1/memories", params={"limit": 2, "offset": 0}).json()
    assert page["total_count"] == 3 and page["limit"] == 2 and len(page["memories"]) == 2
    assert page["memories"][0]["content"] == NOTES[2]  # newest first
    rest = alice.http.get("/v1/memories", params={"limit": 2, "offset": 2}).json()
    assert [m["content"] for m in rest["memories"]] == [NOTES[0]]
    by_importance = alice.http.get("/v1/memories", params={"sort": "importance", "order": "asc"})
    assert [m["content"] for m in by_importance.json()["memories"]] == NOTES
    tagged = alice.http.get("/v1/memories", params={"tags": "n,t1"}).json()
    assert [m["content"] for m in tagged["memories"]] == [NOTES[1]]
    sessions = alice.http.get("/v1/memories", params={"memory_type": "session"}).json()
    assert sessions["total_count"] == 1
    _error(alice.http.get("/v1/memories", params={"state": "bogus"}), 400, "validation_error")
    _error(alice.http.get("/v1/memories", params={"limit": "abc"}), 400, "validation_error")


def test_search_options_and_errors(alice: TenantClient) -> None:
    coffee = _add(alice, NOTES[0], tags=["food"], source="chat/a")
    _add(alice, NOTES[1], tags=["family"], source="mail")
    r = alice.http.get("/v1/memories/search", params={"q": "coffee", "include_trace": "true"})
    body = r.json()
    assert body["results"][0]["memory"]["id"] == coffee["id"]
    assert body["results"][0]["score"] == 1.0
    stages = body["trace"]["stages"]
    assert len(stages) == 16 and body["trace"]["final_count"] == len(body["results"])
    assert "trace" not in alice.http.get("/v1/memories/search", params={"q": "coffee"}).json()
    for params in ({"filter_tags": "family"}, {"source": "mail"}, {"category": "entities"}):
        found = alice.http.get("/v1/memories/search", params={"q": "coffee", **params}).json()
        assert coffee["id"] not in [x["memory"]["id"] for x in found["results"]], params
    # ``tags`` itself is ignored on search, as in ourmem (§4.5)
    ignored = alice.http.get("/v1/memories/search", params={"q": "coffee", "tags": "family"})
    assert ignored.json()["results"][0]["memory"]["id"] == coffee["id"]
    _error(alice.http.get("/v1/memories/search"), 400, "validation_error", "q")
    _error(alice.http.get("/v1/memories/search", params={"q": ""}), 400, "validation_error", "'q'")
    _error(
        alice.http.get("/v1/memories/search", params={"q": "x", "limit": 0}),
        400,
        "validation_error",
    )
    _error(
        alice.http.get("/v1/memories/search", params={"q": "x", "min_score": 2}),
        400,
        "validation_error",
    )
    _error(
        alice.http.get("/v1/memories/search", params={"q": "x", "include_trace": "maybe"}),
        400,
        "validation_error",
    )


def test_search_as_of_sees_the_past(alice: TenantClient) -> None:
    old = datetime.now(UTC) - timedelta(days=30)
    berlin = _add(alice, "I live in Berlin", category="profile", valid_from=old.isoformat())
    alice.http.put(
        f"/v1/memories/{berlin['id']}", json={"valid_to": (old + timedelta(days=10)).isoformat()}
    )
    now = alice.http.get("/v1/memories/search", params={"q": "where do I live"}).json()
    assert berlin["id"] not in [r["memory"]["id"] for r in now["results"]]
    then = (old + timedelta(days=5)).isoformat()
    past = alice.http.get("/v1/memories/search", params={"q": "where do I live", "as_of": then})
    assert berlin["id"] in [r["memory"]["id"] for r in past.json()["results"]]


def test_get_update_history_delete(alice: TenantClient) -> None:
    memory = _add(alice, NOTES[1], tags=["family"])
    path = f"/v1/memories/{memory['id']}"
    assert alice.http.get(path).json() == memory
    updated = alice.http.put(path, json={"content": "My sister lives in Porto", "tags": ["fam"]})
    assert updated.status_code == 200
    assert updated.json()["l2_content"] == "My sister lives in Porto"
    assert updated.json()["version"] == 2 and updated.json()["tags"] == ["fam"]
    hits = alice.http.get("/v1/memories/search", params={"q": "Porto"}).json()["results"]
    assert hits[0]["memory"]["id"] == memory["id"]
    archived = alice.http.put(path, json={"state": "ARCHIVED"}).json()
    assert archived["state"] == "archived"
    history = alice.http.get(f"{path}/history").json()["history"]
    assert [h["action"] for h in history] == ["create", "update", "state:archived"]
    assert alice.http.delete(path).json() == {"status": "deleted"}
    assert alice.http.delete(path).status_code == 200  # deleting again is fine
    assert alice.http.get(path).json()["state"] == "deleted"
    assert alice.http.get("/v1/memories").json()["total_count"] == 0


def test_get_update_delete_errors(alice: TenantClient) -> None:
    memory = _add(alice, NOTES[2])
    path = f"/v1/memories/{memory['id']}"
    _error(alice.http.get("/v1/memories/nope"), 404, "not_found", "memory nope")
    _error(alice.http.put("/v1/memories/nope", json={"content": "x"}), 404, "not_found")
    _error(alice.http.delete("/v1/memories/nope"), 404, "not_found")
    _error(alice.http.get("/v1/memories/nope/history"), 404, "not_found")
    _error(alice.http.put(path, json={"content": ""}), 400, "validation_error", "empty")
    _error(
        alice.http.put(path, json={"state": "x"}), 400, "validation_error", "unknown memory state"
    )
    _error(alice.http.put(path, json={"tags": "a"}), 422, "validation_error")
    assert alice.http.get(path).json()["version"] == 1


def test_batch_delete_by_ids_and_by_filter(alice: TenantClient) -> None:
    a = _add(alice, NOTES[0], tags=["x"], source="import/1")
    b = _add(alice, NOTES[1], tags=["x", "y"], source="import/2")
    c = _add(alice, NOTES[2], tags=["z"], source="manual")
    r = alice.http.post("/v1/memories/batch-delete", json={"memory_ids": [a["id"], "unknown"]})
    assert r.json() == {"deleted": 1, "mode": "ids"}
    dry = alice.http.post("/v1/memories/batch-delete", json={"filter": {"source": "import"}})
    assert dry.json() == {"would_delete": 1}
    done = alice.http.post(
        "/v1/memories/batch-delete", json={"filter": {"tags": ["x", "y"]}, "confirm": True}
    )
    assert done.json() == {"deleted": 1, "mode": "filter"}
    left = alice.http.get("/v1/memories").json()["memories"]
    assert [m["id"] for m in left] == [c["id"]] and b["id"] != c["id"]
    _error(alice.http.post("/v1/memories/batch-delete", json={}), 400, "validation_error", "either")
    _error(
        alice.http.post("/v1/memories/batch-delete", json={"filter": {"state": "?"}}),
        400,
        "validation_error",
    )


def test_delete_all_needs_the_confirmation_header(alice: TenantClient) -> None:
    _add(alice, NOTES[0])
    alice.http.post("/v1/memories", json={"messages": [{"role": "user", "content": "hi"}]})
    _error(alice.http.delete("/v1/memories/all"), 400, "validation_error", "X-Confirm")
    _error(
        alice.http.delete("/v1/memories/all", headers={"X-Confirm": "yes"}), 400, "validation_error"
    )
    assert alice.http.get("/v1/memories").json()["total_count"] == 1
    r = alice.http.delete("/v1/memories/all", headers={"X-Confirm": "delete-all"})
    assert r.json() == {"deleted": 2, "sessions_cleared": 1}
    assert alice.http.get("/v1/memories").json()["total_count"] == 0


@pytest.mark.parametrize("q", [None, "coffee"])
def test_profile(alice: TenantClient, q: str | None) -> None:
    _add(alice, "I prefer dark roast coffee", category="preferences", importance=0.9)
    _add(alice, "My name is Alice", category="profile", importance=0.5)
    _add(alice, "Shipped the release yesterday", category="events")
    params = {"q": q} if q else {}
    profile = alice.http.get("/v1/profile", params=params).json()
    assert profile["static_facts"] == ["I prefer dark roast coffee", "My name is Alice"]
    assert profile["dynamic_context"] == ["Shipped the release yesterday"]
    assert "My name is Alice" in profile["profile"]
    if q is None:
        assert profile["search_results"] is None
    else:
        top = profile["search_results"][0]
        assert top["memory"]["content"] == "I prefer dark roast coffee"
        assert set(top["memory"]) == {"id", "content", "category", "tags"}


def test_inputs_the_fuzzer_found_are_clear_400s(alice: TenantClient) -> None:
    """Each request once made the server fail with a 500."""
    surrogate = b'{"content": "\\ud800 lone"}'
    _error(
        alice.http.post(
            "/v1/memories", content=surrogate, headers={"content-type": "application/json"}
        ),
        422,
        "validation_error",
        "not valid Unicode",
    )
    _error(
        alice.http.post(
            "/v1/memories", json={"content": "x", "valid_from": "0001-01-01T00:00:00+14:00"}
        ),
        400,
        "validation_error",
        "out of the representable range",
    )
    _error(
        alice.http.get(
            "/v1/memories/search", params={"q": "x", "as_of": "0001-01-01T00:00:00+14:00"}
        ),
        400,
        "validation_error",
    )
    _error(alice.http.get("/v1/memories", params={"offset": 2**63}), 400, "validation_error")
    mixed = alice.http.post(
        "/v1/memories",
        json={
            "content": "x",
            "valid_from": "2020-01-01T00:00:00",
            "valid_to": "2021-01-01T00:00:00Z",
        },
    )
    assert (
        mixed.status_code == 201
        and mixed.json()["valid_from"] == "2020-01-01T00:00:00.000000+00:00"
    )
    header = '{"type": "header", "format": "memoryd-export", "version": 1}\n'
    bad_line = '{"type": "memory", "memory": {"content": "\\udc80"}}\n'
    _error(
        alice.http.post(
            "/v1/import",
            content=(header + bad_line).encode(),
            headers={"content-type": "application/x-ndjson"},
        ),
        400,
        "validation_error",
        "line 2",
    )
    assert alice.http.get("/v1/memories").json()["total_count"] == 1
