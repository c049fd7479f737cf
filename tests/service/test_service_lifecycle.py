"""Writes over a memory's life: soft delete, history, updates, key upserts, bulk deletes."""

from __future__ import annotations

import numpy as np
from backends import rows

from memoryd.embed.local import LocalEmbedder
from memoryd.models import Memory, MemoryType, RelationType, State, Tier, utcnow
from memoryd.service import MemoryService
from memoryd.store import MemoryFilter

BACKGROUND = [
    "I prefer dark roast coffee in the morning",
    "My sister lives in Lisbon",
    "I work as a nurse at the city hospital",
    "I play tennis every Saturday",
]


def _seed(service: MemoryService) -> list[str]:
    return [service.add(text).id for text in BACKGROUND]


def _hits(service: MemoryService, query: str, **kw: object) -> list[str]:
    return [r.memory.id for r in service.search(query, touch=False, **kw).results]


def _similarity(service: MemoryService, query: str, memory_id: str) -> float:
    hits = service.search(query, touch=False).results
    return next(h.similarity or 0.0 for h in hits if h.memory.id == memory_id)


def _raw(service: MemoryService, memory_id: str) -> tuple[object, ...]:
    return rows(
        service.store, "SELECT state, content, version FROM memories WHERE id = ?", (memory_id,)
    )[0]


def test_soft_delete_keeps_the_row_but_hides_it(service: MemoryService) -> None:
    _seed(service)
    dog = service.add("The user's dog is named Biscuit", tags=["pets"]).id
    assert _hits(service, "what is the dog called")[0] == dog

    service.delete(dog)
    memory = service.get(dog)
    assert memory.state is State.DELETED
    assert memory.content == "The user's dog is named Biscuit"
    assert memory.version == 2
    assert _raw(service, dog) == ("deleted", "The user's dog is named Biscuit", 2)
    assert service.store.get_vector(dog) is not None  # the row keeps its vector
    # hidden from search (both legs), lists and counts
    assert dog not in _hits(service, "what is the dog called")
    assert dog not in _hits(service, "Biscuit")
    assert dog not in [m.id for m in service.list_memories(limit=100)[0]]
    assert service.list_memories(tags=["pets"]) == ([], 0)
    assert service.stats()["total"] == len(BACKGROUND)
    # still listed when deleted memories are asked for
    assert [m.id for m in service.list_memories(state="deleted")[0]] == [dog]
    # deleting again changes nothing
    service.delete(dog)
    assert service.get(dog).version == 2


def test_history_records_create_update_and_state_with_old_values(
    service: MemoryService,
) -> None:
    memory = service.add("I live in Berlin", tags=["home"], importance=0.4)
    service.update(memory.id, content="I live in Hamburg", importance=0.9)
    service.update(memory.id, state="archived")
    service.update(memory.id, tier="core")
    service.delete(memory.id)

    history = service.history(memory.id)
    assert [h["action"] for h in history] == [
        "create",
        "update",
        "state:archived",
        "update",
        "state:deleted",
    ]
    create, update, archive, tier, delete = history
    assert create["old"] is None
    assert create["new"]["content"] == "I live in Berlin"
    assert create["new"]["id"] == memory.id
    # what the new memory held, not the fields it left empty, nor its text twice
    assert None not in create["new"].values() and "superseded_by" not in create["new"]
    assert "l2_content" not in create["new"]
    assert Memory.model_validate(create["new"]).content == "I live in Berlin"
    assert update["old"]["content"] == "I live in Berlin"
    assert update["new"]["content"] == "I live in Hamburg"
    assert update["old"]["importance"] == 0.4 and update["new"]["importance"] == 0.9
    assert update["old"]["version"] == 1 and update["new"]["version"] == 2
    assert "tags" not in update["new"]  # only what changed
    assert archive["old"]["state"] == "active" and archive["new"]["state"] == "archived"
    assert tier["old"]["tier"] == "peripheral" and tier["new"]["tier"] == "core"
    assert delete["old"]["state"] == "archived" and delete["new"]["state"] == "deleted"
    assert [h["at"] for h in history] == sorted(h["at"] for h in history)
    final = service.get(memory.id)
    assert final.version == 5
    assert final.tier is Tier.CORE
    assert final.l2_content == "I live in Hamburg"


def test_update_with_new_content_re_embeds(service: MemoryService, embedder: LocalEmbedder) -> None:
    _seed(service)
    target = service.add("I drive a red Toyota Corolla").id
    assert _hits(service, "what car do I drive")[0] == target
    car_before = _similarity(service, "what car do I drive", target)
    old_vector = service.store.get_vector(target)

    updated = service.update(target, content="I have a golden retriever named Max")
    assert updated.content == "I have a golden retriever named Max"
    assert updated.version == 2
    vector = service.store.get_vector(target)
    assert vector is not None and old_vector is not None
    # stored in half precision: 11 significant bits
    np.testing.assert_allclose(vector, embedder.embed_one(updated.content), atol=1e-3)
    assert not np.allclose(vector, old_vector)
    # the new content is found, by meaning and by keyword; the old is not
    assert _hits(service, "what is my dog's name")[0] == target
    assert _hits(service, "golden retriever Max")[0] == target
    assert _similarity(service, "what car do I drive", target) < car_before / 2
    space = service.space_id
    assert (
        service.store.bm25_search(service.tenant_id, space, "Toyota Corolla", 10, MemoryFilter())
        == []
    )


def test_update_without_content_keeps_the_vector(service: MemoryService) -> None:
    _seed(service)
    dog = service.add("The user's dog is named Biscuit").id
    before = service.store.get_vector(dog)
    assert before is not None
    service.update(dog, importance=0.9, tags=["pets"], tier="core", state="archived")
    service.update(dog, state="active")
    after = service.store.get_vector(dog)
    assert after is not None
    np.testing.assert_array_equal(after, before)
    assert np.isclose(np.linalg.norm(after), 1.0)
    zero = rows(
        service.store,
        "SELECT COUNT(*) FROM memories WHERE vector IS NULL OR vector = zeroblob(length(vector))",
        postgres="SELECT COUNT(*) FROM memories WHERE vector IS NULL OR vector_norm(vector) = 0",
    )
    assert zero == [(0,)]
    assert _hits(service, "what is the dog called")[0] == dog
    assert service.get(dog).tags == ["pets"]


def test_key_upsert_supersedes_the_slot_holder(service: MemoryService) -> None:
    """A new value for a key is a change with history: the old value stays reachable as of then."""
    _seed(service)
    first = service.add("I live in Berlin", key="home-city", tags=["home"])
    between = utcnow()
    second = service.add("I live in Hamburg", key="home-city")
    assert second.id != first.id
    assert second.content == "I live in Hamburg"
    assert second.tags == ["home"]  # fields not given are kept from the old value
    assert [(r.relation_type, r.target_id) for r in second.relations] == [
        (RelationType.SUPERSEDES, first.id)
    ]
    old = service.get(first.id)
    assert old.superseded_by == second.id and old.invalidated_at is not None
    assert old.key is None  # the slot is held by the new value
    assert [h["action"] for h in service.history(first.id)] == ["create", "supersede"]
    rows, _ = service.list_memories(limit=100)
    assert [m.id for m in rows if m.key == "home-city"] == [second.id]
    hits = _hits(service, "where do I live")
    assert hits[0] == second.id and first.id not in hits
    assert _hits(service, "where do I live", as_of=between)[0] == first.id

    # the same value again is a repeat: the holder, recalled once more, no new row
    again = service.add("I live in Hamburg", key="home-city")
    assert again.id == second.id and again.access_count == second.access_count + 1
    assert [h["action"] for h in service.history(second.id)] == ["create"]

    # once the slot's memory is deleted, the key is free for a new one
    service.delete(second.id)
    third = service.add("I live in Munich", key="home-city")
    assert third.id != second.id and third.version == 1 and not third.relations
    assert service.get(second.id).state is State.DELETED


def test_same_content_twice_is_one_memory(service: MemoryService) -> None:
    _seed(service)
    first = service.add("My locker code is 4711")
    second = service.add("My locker code is 4711", tags=["gym"])
    assert second.id == first.id
    assert second.access_count == first.access_count + 1
    assert second.tags == ["gym"]  # a repeat's new tags join the memory's, nothing is dropped
    again = service.add("My locker code is 4711", tags=["gym", "work"])
    assert again.id == first.id and again.tags == ["gym", "work"]
    assert service.list_memories(limit=100)[1] == len(BACKGROUND) + 1
    # once forgotten, the same text is a new memory again
    service.delete(first.id)
    third = service.add("My locker code is 4711")
    assert third.id != first.id


def test_batch_delete_by_ids(service: MemoryService) -> None:
    ids = _seed(service)
    result = service.batch_delete(ids=[ids[0], ids[1], "00000000-0000-0000-0000-000000000000"])
    assert result == {"deleted": 2, "mode": "ids"}
    assert service.get(ids[0]).state is State.DELETED
    assert service.get(ids[2]).state is State.ACTIVE
    assert service.list_memories()[1] == len(ids) - 2
    assert service.batch_delete(ids=[ids[0]]) == {"deleted": 0, "mode": "ids"}


def test_batch_delete_by_filter_is_a_dry_run_until_confirmed(service: MemoryService) -> None:
    keep = _seed(service)
    work = [
        service.add("Standup is at 9:30", tags=["work", "daily"]).id,
        service.add("The VPN password rotates monthly", tags=["work"]).id,
    ]
    f = MemoryFilter(tags=["work"])
    assert service.batch_delete(filter=f) == {"would_delete": 2}
    assert service.batch_delete(filter=f, confirm=False) == {"would_delete": 2}
    assert all(service.get(i).state is State.ACTIVE for i in work)
    assert service.batch_delete(filter=MemoryFilter(tags=["work", "daily"])) == {"would_delete": 1}

    assert service.batch_delete(filter=f, confirm=True) == {"deleted": 2, "mode": "filter"}
    assert all(service.get(i).state is State.DELETED for i in work)
    assert all(service.get(i).state is State.ACTIVE for i in keep)
    assert service.batch_delete(filter=f) == {"would_delete": 0}
    assert service.batch_delete(filter=f, confirm=True) == {"deleted": 0, "mode": "filter"}


def test_delete_all_needs_confirm_and_clears_sessions(service: MemoryService) -> None:
    ids = _seed(service)
    service.ingest(
        [
            {"role": "user", "content": "Let's plan the trip to Rome"},
            {"role": "assistant", "content": "Sure, when do you want to go?"},
        ],
        session_id="s1",
    )
    assert len(service.session_messages()) == 2

    result = service.delete_all(confirm=True)
    assert result == {"deleted": len(ids) + 2, "sessions_cleared": 2}
    assert service.session_messages() == []
    assert service.list_memories() == ([], 0)
    assert service.list_memories(memory_type="session") == ([], 0)
    assert service.search("trip to Rome", touch=False).results == []
    assert all(service.get(i).state is State.DELETED for i in ids)
    assert service.stats()["total"] == 0
    # the store keeps working after a wipe
    fresh = service.add("I started learning Italian")
    assert _hits(service, "which language am I learning") == [fresh.id]


def test_list_filters(service: MemoryService) -> None:
    a = service.add("Standup is at 9:30", tags=["work", "daily"], category="events").id
    b = service.add("The VPN password rotates monthly", tags=["work"], category="cases").id
    c = service.add("I like jazz", tags=["music"], category="preferences", tier="core").id
    d = service.add("Monday review notes", tags=["work", "daily"], memory_type="insight").id
    service.update(c, state="archived")
    service.ingest([{"role": "user", "content": "daily work chat"}], session_id="s1")

    def ids(**kw: object) -> set[str]:
        rows, total = service.list_memories(limit=100, **kw)  # type: ignore[arg-type]
        assert total == len(rows)
        return {m.id for m in rows}

    assert ids() == {a, b, c, d}
    assert ids(category="events") == {a}
    assert ids(category="cases") == {b}
    assert ids(tags=["work"]) == {a, b, d}
    assert ids(tags=["work", "daily"]) == {a, d}  # all must match
    assert ids(tags="work,daily") == {a, d}
    assert ids(tags=["work", "music"]) == set()
    assert ids(state="archived") == {c}
    assert ids(state="active") == {a, b, d}
    assert ids(tier="core") == {c}
    assert ids(memory_type="insight") == {d}
    assert ids(memory_type="pinned") == {a, b, c}
    assert ids(memory_type="pinned", tags=["work"]) == {a, b}


def test_session_memories_only_listed_when_asked_for(service: MemoryService) -> None:
    pinned = service.add("I like jazz").id
    result = service.ingest(
        [
            {"role": "user", "content": "Let's plan the trip to Rome"},
            {"role": "assistant", "content": "Sure, when do you want to go?"},
        ],
        session_id="s1",
    )
    rows, total = service.list_memories()
    assert [m.id for m in rows] == [pinned] and total == 1
    rows, total = service.list_memories(memory_type="session")
    assert {m.id for m in rows} == set(result.memory_ids) and total == 2
    assert all(m.memory_type is MemoryType.SESSION for m in rows)
    assert service.stats()["by_type"] == {"pinned": 1, "session": 2}


def test_list_sort_order_and_pagination(service: MemoryService) -> None:
    made = [
        service.add(f"Note {i} about the allotment", importance=imp).id
        for i, imp in enumerate([0.2, 0.9, 0.5, 0.7, 0.1])
    ]
    newest_first = list(reversed(made))

    rows, total = service.list_memories()
    assert [m.id for m in rows] == newest_first and total == 5
    rows, _ = service.list_memories(order="asc")
    assert [m.id for m in rows] == made

    rows, _ = service.list_memories(sort="importance", order="desc")
    assert [m.importance for m in rows] == [0.9, 0.7, 0.5, 0.2, 0.1]
    rows, _ = service.list_memories(sort="importance", order="asc")
    assert [m.importance for m in rows] == [0.1, 0.2, 0.5, 0.7, 0.9]

    service.update(made[0], importance=0.3)  # made[0] is now the latest updated
    rows, _ = service.list_memories(sort="updated_at", limit=1)
    assert rows[0].id == made[0]

    pages = []
    for offset in range(0, 6, 2):
        rows, total = service.list_memories(limit=2, offset=offset)
        assert total == 5
        pages.append([m.id for m in rows])
    assert [len(p) for p in pages] == [2, 2, 1]
    assert [i for page in pages for i in page] == newest_first
    rows, total = service.list_memories(limit=2, offset=10)
    assert rows == [] and total == 5
    rows, total = service.list_memories(limit=0)
    assert rows == [] and total == 5
