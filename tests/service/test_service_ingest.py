"""Raw conversation capture: durable, dated, deduplicated, private-safe, searchable."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from backends import rows

from memoryd.errors import ValidationError
from memoryd.models import Category, MemoryType, Message
from memoryd.service import MemoryService
from memoryd.store import DB_FILENAME, SQLiteStore
from memoryd.store.rows import to_us

SAID = datetime(2024, 5, 20, 14, 2, tzinfo=UTC)  # a Monday
CHAT = [
    {"role": "user", "content": "I adopted a cat named Miso last week"},
    {"role": "assistant", "content": "Congratulations! How is Miso settling in?"},
    {"role": "user", "content": "She sleeps on the radiator all day"},
]


def _all_text(service: MemoryService) -> str:
    """Every text column the store holds, as one string."""
    parts: list[str] = []
    for sql, postgres in (
        ("SELECT content || l0_abstract || l1_overview || l2_content FROM memories", None),
        ("SELECT content FROM session_messages", None),
        (
            "SELECT COALESCE(old_value, '') || COALESCE(new_value, '') FROM memory_history",
            "SELECT COALESCE(old_value::text, '') || COALESCE(new_value::text, '') "
            "FROM memory_history",
        ),
        ("SELECT content || l0_abstract FROM memories_fts", "SELECT words::text FROM memories"),
    ):
        parts += [str(r[0]) for r in rows(service.store, sql, postgres=postgres)]
    return "\n".join(parts)


def _on_disk(service: MemoryService, home: Path) -> bytes:
    """What the SQLite file holds, its WAL checkpointed in by closing the store.
    PostgreSQL's files are its server's: there, every text column as SQL reads it."""
    if not isinstance(service.store, SQLiteStore):
        return _all_text(service).encode()
    service.store.close()
    return _file_bytes(home)


def _file_bytes(home: Path) -> bytes:
    return b"".join(
        p.read_bytes() for p in (home / DB_FILENAME, home / f"{DB_FILENAME}-wal") if p.exists()
    )


def test_messages_are_stored_raw_and_as_dated_session_memories(service: MemoryService) -> None:
    dates = [SAID, SAID + timedelta(minutes=1), SAID + timedelta(minutes=3)]
    result = service.ingest(
        CHAT, session_id="s1", agent_id="claude", dates=dates, tags=["chat"], source="cli/claude"
    )
    assert result.session_id == "s1"
    assert result.stored_count == 3 and len(result.memory_ids) == 3

    messages = service.session_messages("s1")
    assert [(m["role"], m["content"]) for m in messages] == [
        (c["role"], c["content"]) for c in CHAT
    ]
    assert [m["said_at"] for m in messages] == [to_us(d) for d in dates]
    assert [m["memory_id"] for m in messages] == result.memory_ids
    assert all(m["agent_id"] == "claude" for m in messages)

    for memory_id, message, when in zip(result.memory_ids, CHAT, dates, strict=True):
        memory = service.get(memory_id)
        assert memory.memory_type is MemoryType.SESSION
        assert memory.category is Category.EVENTS
        line = f"{message['role']}: {message['content']}"
        assert memory.content == memory.l2_content == line
        assert memory.valid_from == when
        assert memory.l0_abstract == f"[{when:%Y-%m-%d} Mon {when:%H:%M}] {message['role']}"
        assert memory.session_id == "s1"
        assert memory.agent_id == "claude"
        assert memory.tags == ["chat"]
        assert memory.source == "cli/claude"
        assert [h["action"] for h in service.history(memory_id)] == ["create"]
    assert service.get(result.memory_ids[0]).l0_abstract == "[2024-05-20 Mon 14:02] user"


def test_message_dates_and_defaults(service: MemoryService) -> None:
    result = service.ingest(
        [
            Message(role="user", content="Booked the dentist", created_at=SAID),
            {"role": "user", "content": "No date on this one either"},
        ],
        dates=SAID + timedelta(days=1),
    )
    assert result.session_id  # a fresh one when none is given
    first, dated = (service.get(i) for i in result.memory_ids)
    assert first.valid_from == SAID  # the message's own date wins
    assert dated.l0_abstract == "[2024-05-21 Tue 14:02] user"
    assert dated.valid_from == SAID + timedelta(days=1)
    assert first.source == "conversation"

    undated = service.ingest([{"role": "user", "content": "When was this?"}])
    memory = service.get(undated.memory_ids[0])
    assert memory.valid_from is None
    assert memory.l0_abstract == "user"


def test_a_message_without_a_role_is_refused_and_nothing_is_stored(
    service: MemoryService,
) -> None:
    for role in ("", "  "):
        with pytest.raises(ValidationError, match="message 1 has an empty role"):
            service.ingest(
                [{"role": "user", "content": "Who said this?"}, {"role": role, "content": "Me"}]
            )
    assert service.session_messages() == []


def test_same_message_in_the_same_session_is_stored_once(service: MemoryService) -> None:
    first = service.ingest(CHAT, session_id="s1")
    again = service.ingest(CHAT, session_id="s1")
    assert again.stored_count == 0 and again.memory_ids == []
    partly = service.ingest(
        [CHAT[0], {"role": "user", "content": "Miso also likes tuna"}], session_id="s1"
    )
    assert partly.stored_count == 1
    # the same words said by another role are another message
    other_role = service.ingest(
        [{"role": "assistant", "content": CHAT[0]["content"]}], session_id="s1"
    )
    assert other_role.stored_count == 1
    # within one call, a repeat is stored once
    twice = service.ingest([CHAT[1], CHAT[1]], session_id="s2")
    assert twice.stored_count == 1

    assert len(service.session_messages("s1")) == 5
    assert len(service.session_messages("s2")) == 1
    rows, total = service.list_memories(memory_type="session", limit=100)
    assert total == 6
    assert set(first.memory_ids) <= {m.id for m in rows}
    # another session gets its own copy
    assert service.ingest(CHAT, session_id="s3").stored_count == 3


def test_private_blocks_are_redacted_and_private_messages_dropped(
    service: MemoryService, home: Path
) -> None:
    result = service.ingest(
        [
            {"role": "user", "content": "My door code is <private>4711-ZEBRA</private>, ok?"},
            {"role": "user", "content": "<private>my salary is 98765 kroner</private>"},
            {"role": "user", "content": "  <PRIVATE>bank pin 2468-OWL</PRIVATE>  "},
            {"role": "user", "content": "Call me <private>after the SECRET-PARTY"},
            {"role": "assistant", "content": "Noted, nothing private kept"},
        ],
        session_id="s1",
    )
    assert result.stored_count == 3
    contents = [m["content"] for m in service.session_messages("s1")]
    assert contents == [
        "My door code is [REDACTED], ok?",
        "Call me [REDACTED]",
        "Noted, nothing private kept",
    ]
    roles = [m["role"] for m in service.session_messages("s1")]
    assert [service.get(i).content for i in result.memory_ids] == [
        f"{r}: {c}" for r, c in zip(roles, contents, strict=True)
    ]
    text = _all_text(service)
    raw = _on_disk(service, home)
    for secret in ("4711-ZEBRA", "98765", "2468-OWL", "SECRET-PARTY"):
        assert secret not in text
        assert secret.encode() not in raw
    assert service.list_memories(memory_type="session")[1] == 3


def test_a_fully_private_call_stores_nothing(service: MemoryService, home: Path) -> None:
    result = service.ingest(
        [{"role": "user", "content": "<private>the launch codes are 0000-KILO</private>"}],
        session_id="s1",
    )
    assert result.stored_count == 0 and result.memory_ids == []
    assert service.session_messages() == []
    assert service.list_memories(memory_type="session") == ([], 0)
    assert rows(service.store, "SELECT COUNT(*) FROM memories") == [(0,)]
    assert b"0000-KILO" not in _on_disk(service, home)


def test_direct_add_also_keeps_private_blocks_off_disk(service: MemoryService, home: Path) -> None:
    memory = service.add("My bank pin is <private>2468-OWL</private>")
    assert service.get(memory.id).content == "My bank pin is [REDACTED]"
    assert "2468-OWL" not in _all_text(service)


def test_search_returns_session_memories(service: MemoryService) -> None:
    result = service.ingest(CHAT, session_id="s1", dates=SAID)
    cat = result.memory_ids[0]
    assert service.search("what is the name of my cat", touch=False).results[0].memory.id == cat
    hits = service.search("where does the cat sleep", memory_type="session", touch=False)
    assert hits.results[0].memory.id == result.memory_ids[2]
    assert all(r.memory.memory_type is MemoryType.SESSION for r in hits.results)
    # among pinned memories too, and by session
    service.add("I prefer dark roast coffee in the morning")
    service.add("My sister lives in Lisbon")
    found = service.search("cat named Miso", limit=10, touch=False).results
    assert cat in [r.memory.id for r in found]
    in_session = service.search("radiator", session_id="s1", touch=False).results
    assert in_session[0].memory.id == result.memory_ids[2]
    assert service.search("radiator", session_id="other", touch=False).results == []
    # the date header is indexed too
    by_date = service.search("2024-05-20", memory_type="session", touch=False).results
    assert {r.memory.id for r in by_date} <= set(result.memory_ids) and by_date
