"""The context engine over REST: the operations a host plugin needs, tenant-isolated, strict."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from server_harness import TenantClient
from test_fuzz import DATETIMES, FUZZ_SETTINGS, INTS, JSON_VALUES, TEXT, WORDS, body_problem


def ingest(t: TenantClient, conversation: str, n: int) -> None:
    """``n`` messages with ids ``m-0`` …; the same call again stores nothing new."""
    messages = [
        {
            "id": f"m-{i}",
            "role": "user" if i % 2 == 0 else "assistant",
            "content": f"Turn {i}: the deploy window for service {i} is Friday at 16:{i % 60:02d}. "
            + "We keep the rollback plan ready and the on-call rota posted. " * 3,
        }
        for i in range(n)
    ]
    r = t.http.post(f"/v1/context/{conversation}/ingest-batch", json={"messages": messages})
    assert r.status_code == 200, r.text
    assert r.json()["stored"] + r.json()["duplicates"] == n


def test_the_host_plugin_loop(alice: TenantClient) -> None:
    ingest(alice, "c1", 60)
    again = alice.http.post(
        "/v1/context/c1/ingest",
        json={"message": {"id": "m-3", "role": "assistant", "content": "resent"}},
    )
    assert again.json() == {"stored": 0, "duplicates": 1, "message_ids": []}
    turn = alice.http.post("/v1/context/c1/after-turn", json={"budget_tokens": 1500})
    assert turn.status_code == 200 and turn.json()["compacted"] is True
    assembled = alice.http.post(
        "/v1/context/c1/assemble", json={"budget_tokens": 1500, "query": "deploy window"}
    ).json()
    assert assembled["estimated_tokens"] <= 1500
    assert "lcm_grep" in assembled["system_addition"]
    assert assembled["messages"][-1]["id"] == "m-59"
    hits = alice.http.post("/v1/context/c1/grep", json={"query": "service 2 is Friday"}).json()
    assert hits["hits"][0]["id"] == "m-2" and hits["hits"][0]["exact"]
    items = alice.http.get("/v1/context/c1").json()["context_items"]
    summary = items[0]["id"]
    expanded = alice.http.post("/v1/context/c1/expand", json={"summary_id": summary}).json()
    assert expanded["messages"] and expanded["messages"][0]["content"].startswith("Turn ")
    assert alice.http.post("/v1/context/c1/compact").status_code == 200
    boot = alice.http.post(
        "/v1/context/c2/bootstrap",
        json={"transcript": '[{"role": "user", "content": "hello"}]'},
    )
    assert boot.json()["stored"] == 1


def test_another_tenants_conversation_is_not_found(alice: TenantClient, bob: TenantClient) -> None:
    ingest(alice, "private", 3)
    # to bob it is a conversation with nothing ingested: his own recall, none of hers
    seen = bob.http.post(
        "/v1/context/private/assemble", json={"budget_tokens": 4000, "query": "deploy"}
    )
    assert seen.status_code == 200, seen.text
    assert seen.json()["messages"] == [] and seen.json()["summaries"] == 0
    found = bob.http.post("/v1/context/private/grep", json={"query": "deploy"})
    assert found.status_code == 200 and found.json()["hits"] == []
    for path, body in (
        ("after-turn", {"budget_tokens": 4000}),
        ("expand", {"query": "deploy"}),
    ):
        r = bob.http.post(f"/v1/context/private/{path}", json=body)
        assert r.status_code == 404, (path, r.text)
        assert r.json()["error"]["code"] == "not_found"
    assert bob.http.get("/v1/context/private").status_code == 404
    assert bob.http.post("/v1/context/private/compact").status_code == 404


def test_bad_input_is_a_clear_error(alice: TenantClient) -> None:
    ingest(alice, "small", 6)
    r = alice.http.post("/v1/context/small/assemble", json={"budget_tokens": 50})
    assert r.status_code == 400
    assert r.json()["error"]["code"] == "validation_error"
    assert "fresh tail" in r.json()["error"]["message"]
    broken = alice.http.post(
        "/v1/context/b/bootstrap", json={"transcript": '{"type": "summary"}\n{"type": '}
    )
    assert broken.status_code == 400 and "line 2" in broken.json()["error"]["message"]
    assert alice.http.get("/v1/context/b").status_code == 404
    bad = alice.http.post("/v1/context/x/ingest", json={"message": {"content": "no role"}})
    assert bad.status_code == 400


CONTEXT_ROUTES = ("ingest", "ingest-batch", "assemble", "after-turn", "bootstrap", "grep", "expand")
MESSAGE = st.fixed_dictionaries(
    {"role": WORDS | TEXT, "content": TEXT | st.lists(JSON_VALUES, max_size=3) | JSON_VALUES},
    optional={"id": TEXT | INTS, "created_at": DATETIMES | TEXT, "tool_results": JSON_VALUES},
)
FIELDS = {
    "message": MESSAGE | JSON_VALUES,
    "messages": st.lists(MESSAGE | JSON_VALUES, max_size=4) | JSON_VALUES,
    "budget_tokens": INTS | JSON_VALUES,
    "query": TEXT | JSON_VALUES,
    "limit": INTS | JSON_VALUES,
    "transcript": TEXT | st.just('[{"role": "user", "content": "x"}]') | JSON_VALUES,
    "format": st.sampled_from(("json", "openclaw", "claude-code", "nope")) | JSON_VALUES,
    "summary_id": TEXT | JSON_VALUES,
}


@pytest.mark.parametrize("route", CONTEXT_ROUTES)
@settings(FUZZ_SETTINGS, max_examples=40)
@given(data=st.data())
def test_context_routes_never_answer_5xx(alice: TenantClient, route: str, data: Any) -> None:
    conversation = data.draw(st.sampled_from(("fuzz", "fuzz%20two", "x" * 201)), label="id")
    if route != "ingest-batch":  # a conversation to act on; a batch may make its own
        ingest(alice, "fuzz", 2)
    body = data.draw(
        st.dictionaries(st.sampled_from(sorted(FIELDS)), JSON_VALUES, max_size=3).flatmap(
            lambda base: st.fixed_dictionaries({k: FIELDS[k] for k in base}).map(
                lambda chosen: {**base, **chosen}
            )
        )
        | JSON_VALUES,
        label="body",
    )
    raw = json.dumps(body)
    path = f"/v1/context/{conversation}/{route}"
    response = alice.http.post(path, content=raw, headers={"Content-Type": "application/json"})
    assert response.status_code < 500, f"{path} {raw} -> {response.status_code} {response.text}"
    assert body_problem(response, path) is None, f"{path} {raw}"
