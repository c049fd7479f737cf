"""Smart ingest with an LLM, through the real server and a scripted OpenAI-compatible one.

The scripted LLM answers extraction, then reconciliation; each test checks
what the decision did to the store over HTTP, that the category rules and
pinned protection overrule the model, that the slot guard saves a call,
that the prompt never shows a memory's UUID, and that every kind of LLM
failure ends in a completed task with its errors recorded and nothing lost.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from server_harness import RunningServer, TenantClient, free_port, ingest_and_wait, start_server

from memoryd.embed.local import LocalEmbedder
from memoryd.server import ServeOptions

# the scripted OpenAI-compatible server lives with the LLM tests; import it from there
sys.path.insert(0, str(Path(__file__).parents[1] / "llm"))
from scripted_llm import Recorded, Reply, ScriptedLLM

TASK_TIMEOUT_S = 60
# the scripted answers are instant, but the server shares 2 loaded cores with the
# tests: a timeout that a slow moment cannot reach; the timeout case waits twice it
LLM_TIMEOUT_S = 10.0
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.I)


@pytest.fixture(scope="module")
def llm() -> Iterator[ScriptedLLM]:
    with ScriptedLLM() as server:
        yield server


@pytest.fixture(scope="module")
def server(
    tmp_path_factory: pytest.TempPathFactory, embedder: LocalEmbedder, llm: ScriptedLLM
) -> Iterator[RunningServer]:
    """This module's server (it replaces conftest's) talks to the scripted LLM."""
    home = tmp_path_factory.mktemp("server-llm") / "home"
    running, stop = start_server(
        home, embedder, llm_base_url=llm.url, llm_model="test-model", llm_timeout_s=LLM_TIMEOUT_S
    )
    yield running
    stop()


# ---------------------------------------------------------------------- helpers
def fact(text: str, category: str = "preferences", importance: float = 0.9) -> dict[str, Any]:
    return {
        "l0_abstract": text,
        "l1_overview": text,
        "l2_content": text,
        "category": category,
        "tags": ["t"],
        "importance": importance,
    }


def facts(*items: dict[str, Any]) -> str:
    return json.dumps({"facts": list(items)}, ensure_ascii=False)


def decide(*items: tuple[int, str, int | None], **extra: str) -> str:
    decisions = [{"fact_index": i, "decision": d, "target": t, **extra} for i, d, t in items]
    return json.dumps({"decisions": decisions})


def ingest(
    t: TenantClient, llm: ScriptedLLM | None, turns: list[str], *replies: Reply | str
) -> tuple[dict[str, Any], list[Recorded]]:
    """Ingest user turns with ``replies`` scripted; (the finished task, its chat requests)."""
    start = len(llm.chat_requests) if llm else 0
    if llm:
        llm.script(*replies)
    messages = [{"role": "user", "content": turn} for turn in turns]
    messages.insert(1, {"role": "assistant", "content": "Noted."})
    task = ingest_and_wait(t, messages, "s", TASK_TIMEOUT_S)
    if llm:
        assert llm.pending == 0, "the task did not use every scripted answer"
    return task, (llm.chat_requests[start:] if llm else [])


def insights(t: TenantClient) -> list[dict[str, Any]]:
    params: dict[str, str | int] = {"memory_type": "insight", "limit": 100}
    listed: list[dict[str, Any]] = t.http.get("/v1/memories", params=params).json()["memories"]
    return listed


def one(t: TenantClient, text: str) -> dict[str, Any]:
    return next(m for m in insights(t) if m["content"] == text)


def seed(t: TenantClient, llm: ScriptedLLM, text: str, category: str) -> dict[str, Any]:
    """One existing memory: with nothing to compare with, no reconciliation call is made."""
    task, requests = ingest(t, llm, [text], facts(fact(text, category)))
    assert task["decisions"] == {"create": 1} and len(requests) == 1, task
    return one(t, text)


def reconcile(
    t: TenantClient, llm: ScriptedLLM, old: tuple[str, str], new: tuple[str, str], answer: str
) -> tuple[dict[str, Any], dict[str, Any], list[Recorded]]:
    """Seed ``old``, ingest ``new`` with ``answer`` as the model's decision."""
    existing = seed(t, llm, *old)
    task, requests = ingest(t, llm, [new[0]], facts(fact(*new)), answer)
    assert task["extractor"] == "llm" and task["reconciler"] == "llm", task
    assert task["llm_errors"] == [] and task["slot_guarded"] == 0, task
    assert len(requests) == 2 and task["llm"]["calls"] == 2, task
    prompt = requests[1].messages[-1]["content"]
    assert "[0]" in prompt and old[0] in prompt and new[0] in prompt
    assert not UUID.search(json.dumps(requests[1].body)), "a UUID reached the model"
    return existing, task, requests


COFFEE = ("The user drinks coffee every morning", "patterns")
COFFEE_MORE = ("The user drinks two cups of black coffee every morning", "patterns")


# ---------------------------------------------------------------------- the 7 decisions
def test_create_asks_with_numbers_never_uuids(alice: TenantClient, llm: ScriptedLLM) -> None:
    _, task, requests = reconcile(alice, llm, COFFEE, COFFEE_MORE, decide((0, "create", None)))
    assert task["decisions"] == {"create": 1}
    assert {m["content"] for m in insights(alice)} == {COFFEE[0], COFFEE_MORE[0]}
    # extraction saw the conversation, user and assistant, as a transcript
    transcript = requests[0].messages[-1]["content"]
    assert f"User: {COFFEE_MORE[0]}" in transcript and "Assistant: Noted." in transcript


def test_merge_keeps_the_previous_content_in_history(alice: TenantClient, llm: ScriptedLLM) -> None:
    merged = "The user drinks two cups of black coffee every morning, at 7"
    answer = decide((0, "merge", 0), merged_content=merged)
    old, task, _ = reconcile(alice, llm, COFFEE, COFFEE_MORE, answer)
    assert task["decisions"] == {"merge": 1}
    assert [m["content"] for m in insights(alice)] == [merged]
    history = alice.http.get(f"/v1/memories/{old['id']}/history").json()["history"]
    assert any(h["old"] and h["old"].get("content") == COFFEE[0] for h in history), history


def test_skip_stores_nothing(alice: TenantClient, llm: ScriptedLLM) -> None:
    _, task, _ = reconcile(alice, llm, COFFEE, COFFEE_MORE, decide((0, "skip", 0)))
    assert task["decisions"] == {"skip": 1}
    assert [m["content"] for m in insights(alice)] == [COFFEE[0]]


def test_supersede_archives_the_old_memory(alice: TenantClient, llm: ScriptedLLM) -> None:
    old, task, _ = reconcile(alice, llm, COFFEE, COFFEE_MORE, decide((0, "supersede", 0)))
    assert task["decisions"] == {"supersede": 1}
    new = one(alice, COFFEE_MORE[0])
    archived = alice.http.get(f"/v1/memories/{old['id']}").json()
    assert archived["superseded_by"] == new["id"] and archived["invalidated_at"] is not None
    assert new["relations"][0]["relation_type"] == "supersedes"
    assert new["relations"][0]["target_id"] == old["id"]


def test_support_raises_confidence(alice: TenantClient, llm: ScriptedLLM) -> None:
    old, task, _ = reconcile(alice, llm, COFFEE, COFFEE_MORE, decide((0, "support", 0)))
    assert task["decisions"] == {"support": 1}
    after = alice.http.get(f"/v1/memories/{old['id']}").json()
    assert after["confidence"] == pytest.approx(old["confidence"] + 0.1, abs=1e-4)
    assert len(insights(alice)) == 1


def test_contextualize_links_with_a_label(alice: TenantClient, llm: ScriptedLLM) -> None:
    answer = decide((0, "contextualize", 0), context_label="weekdays")
    old, task, _ = reconcile(alice, llm, COFFEE, COFFEE_MORE, answer)
    assert task["decisions"] == {"contextualize": 1}
    assert one(alice, COFFEE_MORE[0])["relations"] == [
        {"relation_type": "contextualizes", "target_id": old["id"], "context_label": "weekdays"}
    ]


def test_contradict_links_both_ways(alice: TenantClient, llm: ScriptedLLM) -> None:
    night = ("The user works best late at night", "patterns")
    morning = ("The user works best early in the morning", "patterns")
    old, task, _ = reconcile(alice, llm, night, morning, decide((0, "contradict", 0)))
    assert task["decisions"] == {"contradict": 1}
    new, old = one(alice, morning[0]), one(alice, night[0])
    assert new["relations"][0]["target_id"] == old["id"]
    assert old["relations"][0] == {
        "relation_type": "contradicts",
        "target_id": new["id"],
        "context_label": None,
    }
    assert old["superseded_by"] is None


# ---------------------------------------------------------------------- rules overrule the LLM
def test_profile_never_supersedes_it_merges(alice: TenantClient, llm: ScriptedLLM) -> None:
    job = ("The user works as a data engineer at Acme", "profile")
    more = ("The user is a senior data engineer at Acme in Berlin", "profile")
    old, task, _ = reconcile(alice, llm, job, more, decide((0, "supersede", 0)))
    assert task["decisions"] == {"merge": 1}
    # a merge combines (without the model's wording, the new fact after the old one)
    assert [m["content"] for m in insights(alice)] == [f"{job[0]}. {more[0]}"]
    assert alice.http.get(f"/v1/memories/{old['id']}").json()["invalidated_at"] is None


def test_events_are_append_only(alice: TenantClient, llm: ScriptedLLM) -> None:
    trip = "The user flew to Rome in March 2024"
    seed(alice, llm, trip, "events")
    later = [
        "The user had a job interview in March 2024",
        "The user bought new hiking boots in March 2024",
    ]
    answer = decide((0, "supersede", 0), (1, "support", 0))
    extracted = facts(*(fact(f, "events", importance=1.0) for f in later))
    task, _ = ingest(alice, llm, later, extracted, answer)
    assert task["decisions"] == {"create": 1, "skip": 1}, task
    old = one(alice, trip)
    assert old["superseded_by"] is None and old["confidence"] == pytest.approx(0.8)


def test_a_contradicted_preference_is_superseded(alice: TenantClient, llm: ScriptedLLM) -> None:
    dark = ("The user wants dark mode in every editor", "preferences")
    light = ("The user wants light mode in every editor", "preferences")
    old, task, _ = reconcile(alice, llm, dark, light, decide((0, "contradict", 0)))
    assert task["decisions"] == {"supersede": 1}
    assert alice.http.get(f"/v1/memories/{old['id']}").json()["superseded_by"] is not None


@pytest.mark.parametrize("decision", ["merge", "supersede"])
def test_pinned_memories_are_never_changed(
    alice: TenantClient, llm: ScriptedLLM, decision: str
) -> None:
    pinned_text = "The user wants dark mode in every editor"
    pinned = alice.http.post("/v1/memories", json={"content": pinned_text}).json()
    assert pinned["memory_type"] == "pinned"
    new = "The user wants dark mode in editors, but light mode when reading in the evening"
    answer = decide((0, decision, 0), merged_content="merged text")
    task, requests = ingest(alice, llm, [new], facts(fact(new)), answer)
    assert task["decisions"] == {"create": 1}, task
    assert pinned_text in requests[1].messages[-1]["content"]
    assert pinned["id"] not in json.dumps(requests[1].body)
    after = alice.http.get(f"/v1/memories/{pinned['id']}").json()
    assert after["content"] == pinned_text and after["superseded_by"] is None
    assert one(alice, new)["relations"] == []


def test_an_unknown_number_creates(alice: TenantClient, llm: ScriptedLLM) -> None:
    _, task, _ = reconcile(alice, llm, COFFEE, COFFEE_MORE, decide((0, "merge", 7)))
    assert task["decisions"] == {"create": 1}
    assert one(alice, COFFEE[0])["content"] == COFFEE[0]


# ---------------------------------------------------------------------- the slot guard, languages
@pytest.mark.parametrize(
    "said",
    [
        ("I love coffee.", "I love coffee.", "Actually I prefer tea now.", "I prefer tea now."),
        ("我喜欢喝咖啡。", "用户喜欢喝咖啡", "我现在更喜欢喝茶。", "用户现在更喜欢喝茶"),
    ],
    ids=["english", "chinese"],
)
def test_the_slot_guard_decides_without_the_llm(
    alice: TenantClient, llm: ScriptedLLM, said: tuple[str, str, str, str]
) -> None:
    first_turn, first_fact, second_turn, second_fact = said
    ingest(alice, llm, [first_turn], facts(fact(first_fact)))
    task, requests = ingest(alice, llm, [second_turn], facts(fact(second_fact)))
    # one call, the extraction: the preference change needed no reconciliation call
    assert len(requests) == 1 and task["llm"]["calls"] == 1, task
    assert task["slot_guarded"] == 1 and task["decisions"] == {"supersede": 1}, task
    assert second_turn in requests[0].messages[-1]["content"]  # the user's words, untranslated
    live = [m["content"] for m in insights(alice) if m["superseded_by"] is None]
    assert live == [second_fact]  # stored as the model wrote it: Chinese stays Chinese


# ---------------------------------------------------------------------- failures degrade
HIKING = "I love hiking in the mountains."
HIKING_FACT = "The user loves hiking in the mountains."  # the rules' fact about the user
GOOD = facts(fact("The user loves hiking in the mountains"))
CUT_BEFORE_FIRST_FACT = '{"facts": [{"l0_abstract": "The user lo'


def raw_turns_found(t: TenantClient) -> bool:
    # the turn itself, not the memory distilled from it (which outranks it in a plain search)
    params = {"q": "hiking mountains", "memory_type": "session"}
    found = t.http.get("/v1/memories/search", params=params).json()
    return any(
        r["memory"]["memory_type"] == "session" and HIKING in r["memory"]["content"]
        for r in found["results"]
    )


@pytest.mark.parametrize(
    ("replies", "failed", "calls"),
    [
        (["Sure! Here you go:\n```json\n" + GOOD + "\n```\nAnything else?"], False, 1),
        ([GOOD[:-2] + ', {"l0_abstract": "The user lo'], False, 1),  # complete items kept
        (['{"fac'] * 2, True, 2),  # nothing to keep, twice
        (['{"facts": [{"l0_abstract": 3, "category": "hobby"}]}', GOOD], False, 2),
        ([Reply(content=None, refusal="I can't help with that.")] * 2, True, 2),
        ([Reply(content=GOOD, delay_s=LLM_TIMEOUT_S * 2)], True, 1),
        # cut at the token limit before the first complete fact: no answer, not "no facts"
        ([Reply(content=CUT_BEFORE_FIRST_FACT, finish_reason="length")], True, 1),
    ],
    ids=[
        "prose-wrapped",
        "truncated",
        "truncated-twice",
        "wrong-types-fixed",
        "refusal",
        "timeout",
        "cut-at-the-limit",
    ],
)
def test_malformed_answers_degrade_and_lose_nothing(
    alice: TenantClient, llm: ScriptedLLM, replies: list[Reply | str], failed: bool, calls: int
) -> None:
    task, requests = ingest(alice, llm, [HIKING], *replies)
    assert raw_turns_found(alice)
    assert task["llm"]["calls"] == calls and task["errors"] == [], task
    contents = [m["content"] for m in insights(alice)]
    if failed:
        assert task["extractor"] == "rules (llm failed)", task
        assert task["llm_errors"] and task["llm_errors"][0].startswith("extraction"), task
        assert contents == [HIKING_FACT]  # the rules still found the fact
    else:
        assert task["extractor"] == "llm" and task["llm_errors"] == [], task
        assert contents == ["The user loves hiking in the mountains"]
    if calls == 2 and not failed:  # the retry quoted what was wrong
        assert "does not match the schema" in requests[1].messages[-1]["content"]
        assert task["llm"]["failures"] == 1


def test_a_failed_reconciliation_falls_back_to_rules(alice: TenantClient, llm: ScriptedLLM) -> None:
    seed(alice, llm, *COFFEE)
    extracted = facts(fact(*COFFEE_MORE))
    task, _ = ingest(alice, llm, [COFFEE_MORE[0]], extracted, "no idea", "still no idea")
    assert task["extractor"] == "llm" and task["reconciler"] == "rules (llm failed)", task
    assert task["llm_errors"][0].startswith("reconciliation"), task
    assert task["llm"] == {**task["llm"], "calls": 3, "failures": 2}
    assert sum(task["decisions"].values()) == 1, task


def test_a_down_llm_degrades_to_rules(tmp_path: Path, embedder: LocalEmbedder) -> None:
    closed = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens there
    running, stop = start_server(
        tmp_path / "home",
        embedder,
        ServeOptions(no_auth=True),
        llm_base_url=closed,
        llm_model="test-model",
    )
    try:
        with running.client() as http:
            local = TenantClient("local", "", http)
            task, _ = ingest(local, None, [HIKING])
            assert task["extractor"] == "rules (llm failed)", task
            assert "cannot reach" in task["llm_errors"][0], task
            assert task["llm"]["failures"] == 1 and task["errors"] == [], task
            assert raw_turns_found(local)
            assert [m["content"] for m in insights(local)] == [HIKING_FACT]
    finally:
        stop()
