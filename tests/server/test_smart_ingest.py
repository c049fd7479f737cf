"""Smart ingest offline (no LLM): a conversation becomes memories that stay current.

A user states preferences, changes one, repeats another and chats idly;
through the real server, the slow path must end with the new preference
found first, the old one superseded but reachable with ``as_of``, the
repeat not duplicated, and no greeting or thanks stored as a memory.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import pytest
from server_harness import accept_invitation, ingest_and_wait

if TYPE_CHECKING:
    from server_harness import TenantClient

TASK_TIMEOUT_S = 60

ENGLISH = {
    "first": [
        ("user", "Hi there!"),
        ("assistant", "Hello! How can I help you today?"),
        ("user", "I love coffee."),
        ("assistant", "Good to know."),
        ("user", "I live in Berlin."),
        ("user", "Thanks!"),
    ],
    "second": [
        ("user", "Hello again"),
        ("user", "Actually I prefer tea now."),
        ("user", "I live in Berlin."),
        ("user", "Thank you so much!"),
    ],
    "question": "What does the user like to drink?",
    "new": "tea",
    "old": "coffee",
    "repeat": "Berlin",
    "chatter": ("Hi there!", "Thanks!", "Hello again", "Thank you so much!"),
}
CHINESE = {
    "first": [
        ("user", "你好！"),
        ("assistant", "你好，有什么可以帮你？"),
        ("user", "我喜欢喝咖啡。"),
        ("user", "我住在上海。"),
        ("user", "谢谢！"),
    ],
    "second": [
        ("user", "你好"),
        ("user", "我现在更喜欢喝茶。"),
        ("user", "我住在上海。"),
        ("user", "谢谢你的帮助"),
    ],
    "question": "我喜欢喝什么？",
    "new": "茶",
    "old": "咖啡",
    "repeat": "上海",
    "chatter": ("你好！", "谢谢！", "你好", "谢谢你的帮助"),
}


def _ingest(t: TenantClient, messages: list[tuple[str, str]], session: str) -> dict[str, Any]:
    return ingest_and_wait(t, [{"role": r, "content": c} for r, c in messages], session)


def _insights(t: TenantClient, **params: Any) -> list[dict[str, Any]]:
    listed = t.http.get("/v1/memories", params={"memory_type": "insight", "limit": 100, **params})
    memories: list[dict[str, Any]] = listed.json()["memories"]
    return memories


@pytest.mark.parametrize("script", [ENGLISH, CHINESE], ids=["english", "chinese"])
def test_a_conversation_becomes_current_memories(alice: TenantClient, script: Any) -> None:
    first = _ingest(alice, script["first"], "s1")
    assert first["decisions"].get("create", 0) >= 2, first
    before_change = datetime.now(UTC)
    time.sleep(0.01)
    second = _ingest(alice, script["second"], "s2")
    assert second["decisions"].get("supersede") == 1, second
    assert second["decisions"].get("support") == 1, second

    live = _insights(alice)
    contents = [m["content"] for m in live]
    # the repeat is one memory, not two; the chatter is no memory at all
    assert sum(script["repeat"] in c for c in contents) == 1, contents
    assert not any(c in script["chatter"] for c in contents), contents

    # the new preference answers the question first: the distilled fact, or the turn that
    # said it (a peer); the turn that said the old one comes after the fact that replaced it
    found = alice.http.get("/v1/memories/search", params={"q": script["question"]}).json()
    ranked = [r["memory"] for r in found["results"]]
    assert script["new"] in ranked[0]["content"], found
    prefs = [m for m in ranked if m["memory_type"] == "insight"]
    assert script["new"] in prefs[0]["content"], prefs
    assert not any(script["old"] in m["content"] for m in prefs), prefs
    old_turns = [i for i, m in enumerate(ranked) if script["old"] in m["content"]]
    assert all(i > ranked.index(prefs[0]) for i in old_turns), ranked

    # the old one is kept, superseded, and what was true before the change
    everything = _insights(alice, state="active")
    old = next(m for m in everything if script["old"] in m["content"])
    new = next(m for m in everything if script["new"] in m["content"])
    assert old["superseded_by"] == new["id"] and old["invalidated_at"] is not None
    assert new["relations"] == [
        {"relation_type": "supersedes", "target_id": old["id"], "context_label": None}
    ]
    then = before_change.isoformat()
    past = alice.http.get(
        "/v1/memories/search",
        params={"q": script["question"], "as_of": then, "memory_type": "insight"},
    ).json()
    assert past["results"] and script["old"] in past["results"][0]["memory"]["content"]
    # the repeat made its memory more trusted
    repeat = next(m for m in live if script["repeat"] in m["content"])
    assert repeat["confidence"] > 0.7


def test_distilled_memories_follow_auto_share_rules(alice: TenantClient, bob: TenantClient) -> None:
    team = alice.http.post(
        "/v1/spaces",
        json={
            "name": "Crew",
            "space_type": "team",
            "members": [{"user_id": bob.id, "role": "reader"}],
        },
    ).json()
    accept_invitation(bob, team["id"])
    rules = f"/v1/spaces/{quote(team['id'], safe='')}/auto-share-rules"
    rule = {"source_space": f"personal/{alice.id}", "categories": ["preferences"]}
    assert alice.http.post(rules, json=rule).status_code == 201
    _ingest(alice, [("user", "I love dark chocolate."), ("user", "I live in Oslo.")], "s3")
    shared = bob.http.get(
        "/v1/memories/search", params={"q": "chocolate", "space": team["id"]}
    ).json()["results"]
    assert [r["memory"]["content"] for r in shared] == ["The user loves dark chocolate."]
    oslo = bob.http.get("/v1/memories/search", params={"q": "Oslo", "space": team["id"]})
    assert all("Oslo" not in r["memory"]["content"] for r in oslo.json()["results"])
