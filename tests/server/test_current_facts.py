"""A changed fact, through the REST server.

The user says where they live, then that they moved. The raw turn that
said the old city is retired with the fact it said: search leaves it out,
it carries the id of the memory that replaced its fact (``superseded_by``)
and status ``superseded``, and ``as_of`` before the move still finds it
(nothing said is lost). tests/hooks/test_hook_current_facts.py checks the
same through the Claude Code prompt hook.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from server_harness import ingest_and_wait

if TYPE_CHECKING:
    from server_harness import TenantClient

BEFORE = [("user", "I live in Berlin and work as a nurse."), ("assistant", "Berlin is lovely!")]
AFTER = [("user", "Big news: I moved to Porto last month."), ("assistant", "Big change!")]
QUESTION = "where does the user live"


def ingest(t: TenantClient, messages: list[tuple[str, str]], session: str) -> None:
    ingest_and_wait(t, [{"role": r, "content": c} for r, c in messages], session)


def ranked(t: TenantClient, query: str) -> list[dict[str, Any]]:
    found = t.http.get("/v1/memories/search", params={"q": query, "limit": 10})
    assert found.status_code == 200, found.text
    return [r["memory"] for r in found.json()["results"]]


def test_a_raw_turn_of_a_replaced_fact_is_retired_with_it(make_tenant: Any) -> None:
    t = make_tenant("mover")
    ingest(t, BEFORE, "s1")
    between = t.http.get("/v1/memories", params={"limit": 1}).json()["memories"][0]["created_at"]
    ingest(t, AFTER, "s2")
    results = ranked(t, QUESTION)
    porto = next(i for i, m in enumerate(results) if m["memory_type"] == "insight")
    assert "Porto" in results[porto]["content"]
    assert results[porto]["content"].startswith("The user moved to Porto")
    assert not any("Berlin" in m["content"] for m in results), results
    turns = t.http.get("/v1/memories", params={"memory_type": "session", "limit": 50}).json()
    berlin_turns = [m for m in turns["memories"] if "Berlin" in m["content"]]
    assert berlin_turns  # kept, and said to be replaced
    for turn in berlin_turns:
        assert turn["status"] == "superseded"
        assert turn["superseded_by"] == results[porto]["id"]
    then = t.http.get(
        "/v1/memories/search", params={"q": QUESTION, "limit": 10, "as_of": between}
    ).json()["results"]
    assert any("I live in Berlin" in r["memory"]["content"] for r in then), then
    # the job in the same sentence was not changed: it is still a current fact
    job = ranked(t, "what job does the user have")
    assert job[0]["content"] == "The user works as a nurse."
    # chatter is kept but never above content
    assert not any(m["content"] == "assistant: Big change!" for m in results[: porto + 1])


def test_a_direct_memory_that_changes_a_fact_supersedes_it(make_tenant: Any) -> None:
    t = make_tenant("direct")
    berlin = t.http.post("/v1/memories", json={"content": "I live in Berlin"}).json()
    munich = t.http.post("/v1/memories", json={"content": "I live in Munich"})
    assert munich.status_code == 201, munich.text
    assert munich.json()["relations"][0]["target_id"] == berlin["id"]
    assert t.http.get(f"/v1/memories/{berlin['id']}").json()["superseded_by"] == munich.json()["id"]
    note = t.http.post("/v1/memories", json={"content": "Standup is at 9"}).json()
    later = t.http.post(
        "/v1/memories", json={"content": "Standup is at 10", "replaces": note["id"]}
    )
    assert later.status_code == 201 and later.json()["relations"][0]["target_id"] == note["id"]
    unknown = t.http.post("/v1/memories", json={"content": "x", "replaces": "nope"})
    assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "not_found"
    twice = t.http.post("/v1/memories", json={"content": "y", "replaces": note["id"]})
    assert twice.status_code == 400 and twice.json()["error"]["code"] == "validation_error"
