"""Malformed input at the edge: too deep, not Unicode, too large a number. A 400, never a 500.

Each body below was a 500 before (a ``RecursionError``, a
``UnicodeEncodeError``, an ``OverflowError``); each is now refused before a
route reads it, with the API's JSON error (a 400; text no store can hold, a
bad value of a body, the 422 of the routes' own checks), and the next
request on the same connection is answered as usual.
"""

from __future__ import annotations

from typing import Any

import pytest
from server_harness import TenantClient

DEPTH = 600


def nested(depth: int) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = {"a": [value]} if depth % 2 else {"a": value}
    return value


def refused(response: Any, words: str, status: int = 400) -> None:
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert error["code"] == "validation_error" and words in error["message"]


def test_a_deeply_nested_body_is_a_400_on_every_route(alice: TenantClient) -> None:
    deep = nested(DEPTH)
    event = {"tool": "Write", "arguments": deep, "success": True}
    refused(
        alice.http.post("/v1/checkpoints", json={"session_id": "s", "events": [event]}),
        "nested deeper",
    )
    call = {"id": "t1", "type": "function", "function": {"name": "f", "arguments": deep}}
    message = {"id": "m1", "role": "assistant", "content": "", "tool_calls": [call]}
    refused(alice.http.post("/v1/context/deep/ingest", json={"message": message}), "nested")
    refused(alice.http.post("/v1/memories", json={"content": "x", "metadata": deep}), "nested")
    assert alice.http.get("/v1/memories").status_code == 200  # the connection goes on


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("PUT", "/api/settings/memory", '{"noSystemRoleProviders": ["\\ud800"]}'),
        (
            "POST",
            "/v1/context/s/bootstrap",
            '{"transcript": "[{\\"role\\": \\"user\\", \\"content\\": \\"\\ud800\\"}]"}',
        ),
        ("POST", "/v1/memories", '{"content": "I live in \\udc00Oslo"}'),
        ("POST", "/v1/memories", '{"content": "ok", "tags": ["\\ud83d"]}'),
    ],
)
def test_a_lone_surrogate_is_a_400(alice: TenantClient, method: str, path: str, body: str) -> None:
    response = alice.http.request(
        method, path, content=body.encode(), headers={"content-type": "application/json"}
    )
    refused(response, "Unicode", 422)  # a bad value of a body, as the routes' own checks say


def test_a_lone_surrogate_inside_a_transcript_is_a_400(alice: TenantClient) -> None:
    """Escaped twice: valid text outside, a lone surrogate once the transcript is read."""
    transcript = '[{"role": "user", "content": "hi \\ud800 there"}]'
    response = alice.http.post("/v1/context/t/bootstrap", json={"transcript": transcript})
    refused(response, "Unicode")


def test_a_page_past_what_the_store_can_count_is_a_400(alice: TenantClient) -> None:
    refused(alice.http.get("/api/memory", params={"page": 10**18}), "at most")
    refused(alice.http.get("/api/memory", params={"offset": 10**19}), "at most")
