"""Two tenants on one database (SQLite file or PostgreSQL) never see or touch each other's
memories."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from backends import on_backend

from memoryd.embed.local import LocalEmbedder
from memoryd.errors import NotFoundError
from memoryd.models import State
from memoryd.service import MemoryService
from memoryd.store import MemoryFilter


@pytest.fixture
def home(
    home: Path, backend: str, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Path:
    return on_backend(home, backend, request, monkeypatch)


@pytest.fixture
def tenants(home: Path, embedder: LocalEmbedder) -> Iterator[tuple[MemoryService, MemoryService]]:
    a = MemoryService(home, embedder=embedder, tenant_id="a")
    b = MemoryService(home, embedder=embedder, tenant_id="b")
    yield a, b
    a.close()
    b.close()


def test_tenant_cannot_read_another_tenants_memory(
    tenants: tuple[MemoryService, MemoryService],
) -> None:
    a, b = tenants
    dog = a.add("The user's dog is named Biscuit", tags=["pets"], category="entities")
    a.ingest([{"role": "user", "content": "My dog Biscuit loves the beach"}], session_id="s1")
    b.add("I prefer green tea over coffee")

    with pytest.raises(NotFoundError):
        b.get(dog.id)
    with pytest.raises(NotFoundError):
        b.history(dog.id)
    rows, total = b.list_memories(limit=100)
    assert total == 1 and rows[0].content == "I prefer green tea over coffee"
    assert b.list_memories(memory_type="session") == ([], 0)
    assert b.list_memories(tags=["pets"]) == ([], 0)
    assert b.session_messages() == []
    assert b.session_messages("s1") == []
    for query in ("what is the dog called", "Biscuit", "beach"):
        contents = [r.memory.content for r in b.search(query, touch=False).results]
        assert all("Biscuit" not in c for c in contents), contents
        assert all(r.memory.tenant_id == "b" for r in b.search(query, touch=False).results)
    assert b.stats()["total"] == 1
    assert a.stats()["total"] == 2
    # and the owner still sees everything
    assert a.search("what is the dog called", touch=False).results[0].memory.id == dog.id


def test_tenant_cannot_change_another_tenants_memory(
    tenants: tuple[MemoryService, MemoryService],
) -> None:
    a, b = tenants
    dog = a.add("The user's dog is named Biscuit", tags=["pets"])
    a.ingest([{"role": "user", "content": "My dog Biscuit loves the beach"}], session_id="s1")

    with pytest.raises(NotFoundError):
        b.update(dog.id, content="The user's dog is named Rex")
    with pytest.raises(NotFoundError):
        b.update(dog.id, state="archived")
    with pytest.raises(NotFoundError):
        b.delete(dog.id)
    assert b.batch_delete(ids=[dog.id]) == {"deleted": 0, "mode": "ids"}
    assert b.batch_delete(filter=MemoryFilter(tags=["pets"])) == {"would_delete": 0}
    assert b.batch_delete(filter=MemoryFilter(tags=["pets"]), confirm=True)["deleted"] == 0
    assert b.delete_all(confirm=True) == {"deleted": 0, "sessions_cleared": 0}

    after = a.get(dog.id)
    assert after.content == "The user's dog is named Biscuit"
    assert after.state is State.ACTIVE
    assert after.version == 1
    assert [h["action"] for h in a.history(dog.id)] == ["create"]
    assert len(a.session_messages("s1")) == 1
    assert a.list_memories(memory_type="session")[1] == 1


def test_same_key_and_session_in_two_tenants_are_separate(
    tenants: tuple[MemoryService, MemoryService],
) -> None:
    a, b = tenants
    mine = a.add("I live in Berlin", key="home-city")
    theirs = b.add("I live in Madrid", key="home-city")
    assert mine.id != theirs.id
    assert a.get(mine.id).content == "I live in Berlin"
    assert a.get(mine.id).version == 1
    again = b.add("I live in Seville", key="home-city")
    assert again.id != theirs.id and b.get(theirs.id).superseded_by == again.id
    assert a.get(mine.id).content == "I live in Berlin"
    assert a.get(mine.id).superseded_by is None and a.get(mine.id).key == "home-city"

    message = [{"role": "user", "content": "Let's plan the trip to Rome"}]
    assert a.ingest(message, session_id="shared").stored_count == 1
    # the same message in the same session id is new for the other tenant
    assert b.ingest(message, session_id="shared").stored_count == 1
    assert len(a.session_messages("shared")) == 1
    assert len(b.session_messages("shared")) == 1


def test_tenant_delete_all_leaves_the_other_tenant_alone(
    tenants: tuple[MemoryService, MemoryService],
) -> None:
    a, b = tenants
    kept = a.add("The user's dog is named Biscuit")
    a.ingest([{"role": "user", "content": "My dog Biscuit loves the beach"}], session_id="s1")
    b.add("I prefer green tea over coffee")
    b.ingest([{"role": "user", "content": "Green tea every afternoon"}], session_id="s1")

    result = b.delete_all(confirm=True)
    assert result == {"deleted": 2, "sessions_cleared": 1}
    assert b.list_memories() == ([], 0)
    assert a.get(kept.id).state is State.ACTIVE
    assert a.list_memories()[1] == 1
    assert len(a.session_messages("s1")) == 1
    assert a.search("what is the dog called", touch=False).results[0].memory.id == kept.id
