"""Bad and oversized input is a 4xx with the error object, and leaves nothing behind.

Each case here was a 500, or hours of work, before the server bounded it:
a thousand tags in a filter, a deeply nested import line, an integer too
large for SQLite in an imported record, thousands of messages in one ingest,
and three values the server used to take (an unknown ingest mode, an empty
role, a validity span that ends before it starts).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import httpx

from memoryd.store.filters import MAX_FILTER_TAGS
from memoryd.validate import MAX_TAG_CHARS, MAX_TAGS

if TYPE_CHECKING:
    from server_harness import TenantClient

HEADER = json.dumps({"type": "header", "format": "memoryd-export", "version": 1})
NDJSON = {"Content-Type": "application/x-ndjson"}


def _error(response: httpx.Response, status: int, code: str, words: str) -> None:
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert error["code"] == code
    assert words in error["message"], error["message"]


def _count(t: TenantClient, **params: Any) -> int:
    response = t.http.get("/v1/memories", params={"limit": 0, **params})
    assert response.status_code == 200, response.text
    total: int = response.json()["total_count"]
    return total


def _turns(t: TenantClient) -> int:
    return _count(t, memory_type="session")


# ---------------------------------------------------------------------- stored tags
def test_too_many_or_too_long_tags_are_a_400_and_nothing_is_stored(alice: TenantClient) -> None:
    before = _count(alice)
    many = [f"t{i}" for i in range(10_000)]
    _error(
        alice.http.post("/v1/memories", json={"content": "a note", "tags": many}),
        400,
        "validation_error",
        f"at most {MAX_TAGS}",
    )
    huge = "x" * (1024 * 1024)
    _error(
        alice.http.post("/v1/memories", json={"content": "a note", "tags": [huge]}),
        400,
        "validation_error",
        f"at most {MAX_TAG_CHARS} characters",
    )
    made = alice.http.post("/v1/memories", json={"content": "a note", "tags": ["fine"]})
    assert made.status_code == 201
    _error(
        alice.http.put(f"/v1/memories/{made.json()['id']}", json={"tags": many}),
        400,
        "validation_error",
        f"at most {MAX_TAGS}",
    )
    assert _count(alice) == before + 1
    assert alice.http.get(f"/v1/memories/{made.json()['id']}").json()["tags"] == ["fine"]


# ---------------------------------------------------------------------- tag filters
def test_a_thousand_tags_in_a_filter_is_a_400_on_search_list_and_batch_delete(
    alice: TenantClient,
) -> None:
    made = alice.http.post("/v1/memories", json={"content": "tagged note", "tags": ["t0", "t1"]})
    assert made.status_code == 201
    many = [f"t{i}" for i in range(1000)]
    words = f"at most {MAX_FILTER_TAGS} tags"
    _error(
        alice.http.get("/v1/memories/search", params={"q": "note", "filter_tags": ",".join(many)}),
        400,
        "validation_error",
        words,
    )
    _error(
        alice.http.get("/v1/memories", params={"tags": ",".join(many)}),
        400,
        "validation_error",
        words,
    )
    _error(
        alice.http.post(
            "/v1/memories/batch-delete", json={"filter": {"tags": many}, "confirm": True}
        ),
        400,
        "validation_error",
        words,
    )
    assert _count(alice) == 1  # the refused batch delete deleted nothing
    # the most a filter may name still works, and still means "all of them"
    enough = ["t0", "t1", *(f"x{i}" for i in range(MAX_FILTER_TAGS - 2))]
    listed = alice.http.get("/v1/memories", params={"tags": ",".join(enough)})
    assert listed.status_code == 200 and listed.json()["total_count"] == 0
    assert _count(alice, tags="t0,t1") == 1


# ---------------------------------------------------------------------- import bodies
def _import(t: TenantClient, *lines: str) -> httpx.Response:
    return t.http.post("/v1/import", content="\n".join([HEADER, *lines]) + "\n", headers=NDJSON)


def _record(i: int, **fields: Any) -> str:
    return json.dumps({"type": "memory", "memory": {"content": f"imported note {i}", **fields}})


def test_a_deeply_nested_import_line_is_a_400_and_imports_nothing(alice: TenantClient) -> None:
    for depth in (40, 100_000):  # past the bound, and past what the JSON parser can take
        deep = "[" * depth + "]" * depth
        _error(_import(alice, _record(1), deep), 400, "validation_error", "line 3 is nested deeper")
    assert _count(alice) == 0


def test_an_integer_too_large_for_sqlite_is_a_400_and_the_file_imports_nothing(
    alice: TenantClient,
) -> None:
    good = [_record(i) for i in range(300)]  # more than one write batch before the bad line
    for field in ("version", "access_count"):
        bad = _record(300, **{field: 2**64})
        _error(_import(alice, *good, bad), 400, "validation_error", "line 302")
        assert _count(alice) == 0
    assert _import(alice, *good).json()["imported"] == 300


def test_a_deeply_nested_json_body_is_a_400(alice: TenantClient) -> None:
    deep = "[" * 100_000 + "]" * 100_000
    response = alice.http.post(
        "/v1/memories",
        content='{"content": "x", "tags": ' + deep + "}",
        headers={"Content-Type": "application/json"},
    )
    _error(response, 400, "validation_error", "nested deeper than")
    assert _count(alice) == 0


# ---------------------------------------------------------------------- ingest
def _messages(n: int) -> list[dict[str, str]]:
    return [{"role": "user", "content": f"message number {i}"} for i in range(n)]


def test_thousands_of_messages_in_one_request_is_a_413_and_stores_nothing(
    alice: TenantClient,
) -> None:
    for n in (5000, 201):
        response = alice.http.post("/v1/memories", json={"messages": _messages(n), "mode": "raw"})
        _error(response, 413, "payload_too_large", "at most 200 per request")
    assert _turns(alice) == 0
    taken = alice.http.post("/v1/memories", json={"messages": _messages(3), "mode": "raw"})
    assert taken.status_code == 202 and taken.json()["stored_count"] == 3


def test_an_unknown_ingest_mode_is_a_400_and_stores_nothing(alice: TenantClient) -> None:
    response = alice.http.post("/v1/memories", json={"messages": _messages(2), "mode": "bogus"})
    _error(response, 400, "validation_error", "unknown ingest mode: bogus")
    assert _turns(alice) == 0


def test_a_message_with_an_empty_role_is_a_400_and_stores_nothing(alice: TenantClient) -> None:
    for role in ("", "   "):
        messages = [{"role": "user", "content": "hello"}, {"role": role, "content": "hi"}]
        response = alice.http.post("/v1/memories", json={"messages": messages, "mode": "raw"})
        _error(response, 400, "validation_error", "message 1 has an empty role")
    assert _turns(alice) == 0


# ---------------------------------------------------------------------- validity spans
def test_a_validity_span_that_ends_before_it_starts_is_a_400(alice: TenantClient) -> None:
    made = alice.http.post(
        "/v1/memories", json={"content": "I live in Porto", "valid_from": "2024-01-01T00:00:00Z"}
    ).json()
    path = f"/v1/memories/{made['id']}"
    both = {"valid_from": "2025-01-01T00:00:00Z", "valid_to": "2024-06-01T00:00:00Z"}
    _error(alice.http.put(path, json=both), 400, "validation_error", "valid_to must be after")
    # only the end, before the start the memory already has
    early_end = {"valid_to": "2023-01-01T00:00:00Z"}
    _error(alice.http.put(path, json=early_end), 400, "validation_error", "valid_to must be after")
    same = {"valid_to": "2024-01-01T00:00:00Z"}
    _error(alice.http.put(path, json=same), 400, "validation_error", "valid_to must be after")
    unchanged = alice.http.get(path).json()
    assert unchanged["version"] == made["version"] and unchanged["valid_to"] is None
    fine = alice.http.put(path, json={"valid_to": "2025-01-01T00:00:00Z"})
    assert fine.status_code == 200 and fine.json()["valid_to"].startswith("2025-01-01")
