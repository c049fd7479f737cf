"""The SDK at its edge: ISO strings, wrong types, id prefixes, per-user memory, the asyncio twin."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from memoryd import AsyncMemory, Memory, NotFoundError, ValidationError
from memoryd.config import default_home
from memoryd.embed.local import LocalEmbedder
from memoryd.validate import MAX_CONTENT_CHARS


@pytest.fixture
def mem(home: Path, embedder: LocalEmbedder) -> Iterator[Memory]:
    with Memory(home, embedder=embedder) as memory:
        yield memory


def test_times_may_be_iso_strings(mem: Memory) -> None:
    note = mem.add("Renew the passport", expires_at="2027-01-01", valid_from="2025-06-01T09:30Z")
    assert note.expires_at == datetime(2027, 1, 1, tzinfo=UTC)
    assert note.valid_from == datetime(2025, 6, 1, 9, 30, tzinfo=UTC)
    assert [h.memory.id for h in mem.search("passport", as_of="2026-01-01")] == [note.id]
    assert mem.search("passport", as_of="2025-01-01") == []  # before it held
    updated = mem.update(note.id, expires_at="2028-01-01T00:00:00+02:00")
    assert updated.expires_at == datetime(2027, 12, 31, 22, 0, tzinfo=UTC)
    for call in (
        lambda: mem.search("passport", as_of="yesterday"),
        lambda: mem.add("x", expires_at="next year"),
        lambda: mem.update(note.id, valid_to="soon"),
        lambda: mem.search("passport", created_after=20260101),
    ):
        with pytest.raises(ValidationError) as raised:
            call()
        assert "ISO 8601" in raised.value.message


@pytest.mark.parametrize(
    ("call", "words"),
    [
        (lambda m: m.ingest("hello"), "messages must be a list"),
        (lambda m: m.ingest(["hello"]), "message 0 must be a dict"),
        (lambda m: m.ingest([{"role": "user"}]), "needs string 'role' and 'content'"),
        (lambda m: m.search("x", limit="5"), "limit must be an integer"),
        (lambda m: m.search("x", limit=True), "limit must be an integer"),
        (lambda m: m.search("x", min_score="high"), "min_score must be a number"),
        (lambda m: m.search("x", limt=5), "unknown option(s) limt"),
        (lambda m: m.search(42), "the query must be text"),
        (lambda m: m.list(limit="10"), "limit must be an integer"),
        (lambda m: m.list(colour="red"), "unknown option(s) colour"),
        (lambda m: m.add("x", importance="high"), "importance must be a number"),
        (lambda m: m.add("x", source=5), "source"),
        (lambda m: m.add("x", colour="red"), "unknown option(s) colour"),
        (lambda m: m.add(["not", "text"]), "content must be a string"),
        (lambda m: m.update("abcd1234", tags=7), "tags must be a list"),
        (lambda m: m.get(None), "memory id must be a non-empty string"),
        (lambda m: m.add("x", user_id="no spaces please"), "invalid user_id"),
    ],
)
def test_wrong_types_are_validation_errors(mem: Memory, call: Any, words: str) -> None:
    with pytest.raises(ValidationError) as raised:
        call(mem)
    assert words in raised.value.message
    assert raised.value.code == "validation_error"


def test_a_message_over_the_content_limit_is_refused(mem: Memory) -> None:
    huge = "x" * (MAX_CONTENT_CHARS + 1)
    with pytest.raises(ValidationError) as raised:
        mem.ingest([{"role": "user", "content": "fine"}, {"role": "user", "content": huge}])
    assert "message 1" in raised.value.message and str(MAX_CONTENT_CHARS) in raised.value.message
    assert mem.list(memory_type="session") == []  # nothing of the call was stored
    stored = mem.ingest([{"role": "user", "content": "y" * MAX_CONTENT_CHARS}])
    assert stored.stored_count == 1


def test_ids_by_unique_prefix(mem: Memory) -> None:
    berlin = mem.add("I moved to Berlin in 2024")
    assert mem.get(berlin.id[:8]).id == berlin.id
    assert mem.update(berlin.id[:6], importance=0.9).id == berlin.id
    assert [h["action"] for h in mem.history(berlin.id[:4])] == ["create", "update"]
    with pytest.raises(NotFoundError) as raised:
        mem.get(berlin.id[:3])
    assert "at least 4 characters" in raised.value.message
    # two ids with a common start: the prefix is ambiguous and both are named
    store = mem.service.store
    twins = [mem.add(f"twin {n}") for n in range(2)]
    for twin, new_id in zip(twins, ("abcd0001-twin", "abcd0002-twin"), strict=True):
        with store.write() as conn:
            conn.execute("UPDATE memories SET id = ? WHERE id = ?", (new_id, twin.id))
    with pytest.raises(ValidationError) as ambiguous:
        mem.get("abcd")
    assert "ambiguous" in ambiguous.value.message
    assert "abcd0001-twin" in ambiguous.value.message and "abcd0002-twin" in ambiguous.value.message
    assert mem.get("abcd0002").content == "twin 1"


def test_updated_content_leaves_no_stale_abstract(mem: Memory) -> None:
    band = mem.add(
        "My favourite band is Radiohead.",
        l0_abstract="My favourite band is Radiohead.",
        l1_overview="I said my favourite band is Radiohead.",
    )
    concert = mem.add("We saw a concert in Lisbon last summer")

    def keyword_hits(word: str) -> set[str]:
        rows = mem.service.store.conn.execute(
            "SELECT m.id FROM memories_fts f JOIN memories m ON m.rowid = f.rowid "
            "WHERE memories_fts MATCH ?",
            (word,),
        )
        return {r[0] for r in rows}

    assert keyword_hits("Radiohead") == {band.id}
    changed = mem.update(band.id, content="My favourite band is Portishead.")
    assert changed.l0_abstract == "My favourite band is Portishead."
    assert "Radiohead" not in changed.l1_overview
    assert keyword_hits("Radiohead") == set()  # neither the content nor the abstract says it
    assert keyword_hits("Portishead") == {band.id}
    assert mem.search("Portishead")[0].memory.id == band.id
    assert mem.search("concert in Lisbon")[0].memory.id == concert.id
    # nothing to change: no history row, no new version
    same = mem.update(band.id, content="My favourite band is Portishead.")
    assert same.version == changed.version
    assert [h["action"] for h in mem.history(band.id)] == ["create", "update"]


def test_archived_memories_leave_search_but_stay_listed(mem: Memory) -> None:
    cat = mem.add("We adopted a cat named Miso")
    mem.update(cat.id, state="archived")
    assert cat.id not in [h.memory.id for h in mem.search("cat named Miso")]
    assert cat.id not in [h.memory.id for h in mem.search("cat", as_of=datetime.now(UTC))]
    assert [m.id for m in mem.list(state="archived")] == [cat.id]
    mem.update(cat.id, state="active")
    assert mem.search("cat named Miso")[0].memory.id == cat.id


def test_users_never_see_each_other(home: Path, embedder: LocalEmbedder) -> None:
    with Memory(home, embedder=embedder) as mem:
        alice = mem.add("My doctor is Dr. Alvarez", user_id="alice")
        bob = mem.add("My doctor is Dr. Brown", user_id="bob")
        shared_text = mem.add("I like green tea", user_id="alice")
        assert mem.add("I like green tea", user_id="bob").id != shared_text.id
        assert [h.memory.id for h in mem.search("who is my doctor", user_id="alice")] == [alice.id]
        assert [h.memory.id for h in mem.search("who is my doctor", user_id="bob")] == [bob.id]
        assert mem.search("who is my doctor") == []  # the local user has none
        for other in (alice.id, alice.id[:8]):
            with pytest.raises(NotFoundError):
                mem.get(other, user_id="bob")
            with pytest.raises(NotFoundError):
                mem.delete(other, user_id="bob")
        assert mem.get(alice.id, user_id="alice").content == "My doctor is Dr. Alvarez"
        assert mem.stats(user_id="bob")["total"] == 2
        assert {m.tenant_id for m in mem.list(user_id="alice")} == {"user:alice"}
    # a default user per instance: the same separation
    with Memory(home, embedder=embedder, user_id="bob") as bobs:
        assert {m.id for m in bobs.list()} == {bob.id, *(m.id for m in bobs.list())}
        assert alice.id not in {m.id for m in bobs.list()}


def test_the_sdk_default_home_is_the_cli_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, embedder: LocalEmbedder
) -> None:
    monkeypatch.delenv("MEMORYD_HOME", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    with Memory(embedder=embedder) as mem:
        assert mem.service.home == default_home() == tmp_path / "xdg" / "memoryd"


def test_async_memory_has_the_same_methods(home: Path, embedder: LocalEmbedder) -> None:
    public = {n for n in dir(Memory) if not n.startswith("_")} - {"service"}
    assert public <= {n for n in dir(AsyncMemory) if not n.startswith("_")}

    async def scenario() -> None:
        async with AsyncMemory(home, embedder=embedder) as mem:
            berlin, coffee = await asyncio.gather(
                mem.add("I moved to Berlin in 2024", category="profile", user_id="ann"),
                mem.add("I prefer dark roast coffee", user_id="ann"),
            )
            hits = await mem.search("where does the user live", user_id="ann")
            assert hits[0].memory.id == berlin.id
            assert await mem.search("where does the user live") == []
            await mem.update(coffee.id[:8], content="I prefer green tea", user_id="ann")
            assert [h["action"] for h in await mem.history(coffee.id, user_id="ann")] == [
                "create",
                "update",
            ]
            result = await mem.ingest(
                [{"role": "user", "content": "I just bought a new bicycle"}],
                mode="smart",
                session_id="s1",
                user_id="ann",
            )
            task = await mem.wait_for_task(result.task_id, user_id="ann")
            assert task["status"] == "completed"
            assert (await mem.get(berlin.id, user_id="ann")).content == berlin.content
            with pytest.raises(ValidationError):
                await mem.search("x", limit="5", user_id="ann")
            await mem.delete(berlin.id, user_id="ann")
            assert (await mem.stats(user_id="ann"))["by_state"]["deleted"] == 1

    asyncio.run(scenario())


def test_every_dict_the_sdk_hands_back_is_json_with_iso_times(mem: Memory, tmp_path: Path) -> None:
    first = mem.add("I keep my bike in the basement storage")
    mem.update(first.id, content="I keep my bike in the hallway now")
    notes = tmp_path / "notes.md"
    notes.write_text("# Bike\n\nThe chain was oiled in May.\n", encoding="utf-8")
    started = mem.import_file(notes)
    dicts: list[Any] = [
        mem.consolidate(),
        started,
        mem.wait_for_import(started["id"]),
        mem.history(first.id),
        mem.stats(),
        mem.profile(),
    ]
    text = json.dumps(dicts)  # raises on a datetime
    times = re.findall(r'"(?:created|updated|completed|started|at)(?:_at)?": "([^"]+)"', text)
    assert times
    for value in times:
        assert datetime.fromisoformat(value).tzinfo is not None
