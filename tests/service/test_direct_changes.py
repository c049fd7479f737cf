"""A direct memory that changes a known fact supersedes it, with history.

"I live in Munich" added after "I live in Berlin" is a change, not a second
answer: the old memory is kept, invalidated and superseded (``as_of``
still finds it), and search, the profile and every door see the new one.
``replaces`` names the memory a new one replaces when its words do not say.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memoryd.errors import NotFoundError, ValidationError
from memoryd.models import RelationType, Status
from memoryd.profile import build_profile
from memoryd.service import MemoryService
from memoryd.store import MemoryFilter


def _top(service: MemoryService, query: str) -> str:
    return service.search(query, touch=False).results[0].memory.content


def test_a_changed_fact_supersedes_the_old_one(service: MemoryService) -> None:
    berlin = service.add("I live in Berlin", category="profile")
    service.add("I work as a nurse", category="profile")
    before = datetime.now(UTC)
    munich = service.add("I live in Munich now", category="profile")
    assert [(r.relation_type, r.target_id) for r in munich.relations] == [
        (RelationType.SUPERSEDES, berlin.id)
    ]
    old = service.get(berlin.id)
    assert old.superseded_by == munich.id and old.invalidated_at is not None
    assert [h["action"] for h in service.history(berlin.id)] == ["create", "update"]
    assert _top(service, "where does the user live") == "I live in Munich now"
    results = service.search("where does the user live", touch=False).results
    assert "I live in Berlin" not in [r.memory.content for r in results]
    then = service.search("where does the user live", as_of=before, touch=False).results
    assert then[0].memory.content == "I live in Berlin"
    # the other fact of the slot table was not touched
    assert service.get(munich.id).invalidated_at is None
    assert _top(service, "what is the user's job") == "I work as a nurse"


def test_values_that_can_hold_together_both_stay(service: MemoryService) -> None:
    tea = service.add("I like green tea")
    coffee = service.add("I like coffee")
    assert coffee.relations == []
    assert service.get(tea.id).invalidated_at is None


def test_replaces_names_what_the_words_do_not(service: MemoryService) -> None:
    room = service.add("The team meets in room B2 on Mondays")
    moved = service.add("The team meets in room C4 on Mondays", replaces=room.id)
    assert moved.relations[0].target_id == room.id
    assert service.get(room.id).superseded_by == moved.id
    with pytest.raises(ValidationError, match="not a current memory"):
        service.add("The team meets in room D1", replaces=room.id)  # already replaced
    with pytest.raises(NotFoundError):
        service.add("The team meets in room D1", replaces="no-such-memory")
    with pytest.raises(ValidationError, match="without a key"):
        service.add("The team meets in room D1", replaces=moved.id, key="room")


def test_a_direct_change_supersedes_a_distilled_fact(service: MemoryService) -> None:
    result = service.ingest(
        [{"role": "user", "content": "I live in Berlin."}], session_id="s1", mode="smart"
    )
    service.wait_for_task(result.task_id)
    distilled = service.search("where does the user live", touch=False).results[0].memory
    assert distilled.content == "The user lives in Berlin."
    moved = service.add("I moved to Lisbon", category="profile")
    assert service.get(distilled.id).superseded_by == moved.id
    turns, _ = service.list_memories(memory_type="session", session_id="s1")
    turn = next(t for t in turns if "Berlin" in t.content)
    assert turn.superseded_by == moved.id  # the turn that said Berlin knows it changed
    assert turn.status is Status.SUPERSEDED  # and, like the fact it said, no longer holds
    hits = service.search("where does the user live", touch=False).results
    assert "Berlin" not in " ".join(h.memory.content for h in hits)


def test_the_profile_lists_current_facts_once(service: MemoryService) -> None:
    for number, said in enumerate(
        [
            "I live in Madrid. I love spicy Thai food.",
            "Small update: we relocated to Oslo. I don't like spicy food anymore.",
            "I live in Oslo.",
        ]
    ):
        result = service.ingest(
            [{"role": "user", "content": said}], session_id=f"s{number}", mode="smart"
        )
        service.wait_for_task(result.task_id)
    service.add("I live in Oslo", category="profile")  # the same fact, pinned
    facts = build_profile(service)["static_facts"]
    assert sum("Oslo" in f for f in facts) == 1, facts
    assert not any("Madrid" in f or "loves spicy" in f for f in facts), facts
    assert any("doesn't like spicy food" in f for f in facts), facts


def test_bookkeeping_marks_are_added_without_a_new_version(service: MemoryService) -> None:
    memory = service.add("I live in Oslo")
    assert memory.marks == ["about:residence"]
    service.store.add_marks(memory.id, ["about:residence", "about:test"])
    got = service.get(memory.id)
    assert got.marks == ["about:residence", "about:test"]  # each once, in order
    assert got.version == memory.version
    assert [h["action"] for h in service.history(memory.id)] == ["create"]
    found, _ = service.store.list_memories(
        service.tenant_id, [service.space_id], MemoryFilter(marks=["about:test"]), limit=5
    )
    assert [m.id for m in found] == [memory.id]  # the marks index holds the new mark


def test_a_place_come_back_from_is_no_new_home(service: MemoryService) -> None:
    """A trip told on the way home says where the user was, not where they live."""
    home = service.add("I live in Tallinn")
    trip = service.add("Flew home from two weeks living in Vienna, the jet lag is brutal")
    assert service.get(home.id).superseded_by is None
    assert trip.relations == []
    assert _top(service, "where does the user live") == "I live in Tallinn"
