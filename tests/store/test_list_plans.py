"""A list that names a few rows finds them by their own index, never by walking the space.

Without statistics SQLite orders a page by the created-at index to skip a
sort, reading every memory of the space before the last match: 0.1 s a
lookup at 100,000 memories (an upsert by key, a session's turns). The plans
here are what SQLite chooses for the statements ``list_memories`` runs.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from memoryd.embed.local import LocalEmbedder
from memoryd.models import MemoryType, State
from memoryd.service import MemoryService
from memoryd.store import MemoryFilter, SQLiteStore


@contextmanager
def traced(store: SQLiteStore) -> Iterator[list[str]]:
    """The statements ``store`` runs on its connection inside the block."""
    statements: list[str] = []
    store.conn.set_trace_callback(statements.append)
    try:
        yield statements
    finally:
        store.conn.set_trace_callback(None)


def selects(statements: list[str]) -> list[str]:
    return [s for s in statements if s.lstrip().upper().startswith("SELECT")]


def plan_of(store: SQLiteStore, sql: str) -> str:
    return " | ".join(r[3] for r in store.conn.execute(f"EXPLAIN QUERY PLAN {sql}"))


@pytest.mark.parametrize(
    ("f", "index"),
    [
        (MemoryFilter(key="diet"), "memories_space_key"),
        (MemoryFilter(key="diet", state=list(State)), "memories_space_key"),
        (MemoryFilter(session_id="s1", memory_type=[MemoryType.SESSION]), "memories_session"),
        (MemoryFilter(superseded_by="m1", memory_type=[MemoryType.SESSION]), "superseded_by"),
        (MemoryFilter(ids=["a", "b"]), "sqlite_autoindex_memories"),
    ],
    ids=["key", "key-any-state", "session", "superseded-by", "ids"],
)
def test_a_pinpointing_filter_uses_its_own_index(
    tmp_path: Path, embedder: LocalEmbedder, f: MemoryFilter, index: str
) -> None:
    with MemoryService(tmp_path / "home", embedder=embedder) as svc:
        svc.add("I am vegetarian", key="diet")
        svc.ingest([{"role": "user", "content": "hello there"}], session_id="s1")
        store = svc.store
        assert isinstance(store, SQLiteStore)
        with traced(store) as statements:
            store.list_memories(svc.tenant_id, [svc.space_id], f)
        assert len(selects(statements)) == 2  # the count and the page
        for sql in selects(statements):
            plan = plan_of(store, sql)
            assert index in plan, plan
            assert "memories_space_created" not in plan, plan


def test_a_live_lookup_by_key_uses_the_key_index(tmp_path: Path, embedder: LocalEmbedder) -> None:
    from memoryd.models import utcnow

    with MemoryService(tmp_path / "home", embedder=embedder) as svc:
        found = svc.add("I am vegetarian", key="diet")
        store = svc.store
        assert isinstance(store, SQLiteStore)
        f = MemoryFilter(key="diet", live_at=utcnow())
        rows, total = store.list_memories(svc.tenant_id, [svc.space_id], f, limit=1)
        assert [r.id for r in rows] == [found.id] and total == 1
        with traced(store) as statements:
            store.list_memories(svc.tenant_id, [svc.space_id], f, limit=1, with_total=False)
        plan = plan_of(store, selects(statements)[0])
        assert "memories_space_key" in plan, plan


def test_an_id_prefix_is_found_by_the_id_index_and_the_access_rule_after(
    tmp_path: Path, embedder: LocalEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memoryd.store import memory_reads

    with MemoryService(tmp_path / "home", embedder=embedder) as svc:
        made = [svc.add(f"note {n}").id for n in range(3)]
        store = svc.store
        assert isinstance(store, SQLiteStore)
        with store.write() as conn:
            for old, new in zip(made, ("beef0001-a", "beef0002-b", "cafe0001-c"), strict=True):
                conn.execute("UPDATE memories SET id = ? WHERE id = ?", (new, old))

        def like(prefix: str) -> list[str]:
            return store.memory_ids_like(svc.tenant_id, [svc.space_id], prefix, 10)

        with traced(store) as statements:
            assert like("beef") == ["beef0001-a", "beef0002-b"]
        checked = next(s for s in statements if " IN (" in s and "m.id" in s)
        plan = plan_of(store, checked)
        assert "autoindex" in plan and "memories_session" not in plan, plan
        assert like("cafe0001") == ["cafe0001-c"] and like("dead") == []
        # past the candidates the one statement answers, the same
        monkeypatch.setattr(memory_reads, "PREFIX_CANDIDATES", 1)
        assert like("beef") == ["beef0001-a", "beef0002-b"]
        assert svc.get("beef0002").id == "beef0002-b"


def test_marks_are_found_by_their_index_and_kept_in_step(
    tmp_path: Path, embedder: LocalEmbedder
) -> None:
    with MemoryService(tmp_path / "home", embedder=embedder) as svc:
        kept = svc.add("I live in Lisbon")
        other = svc.add("I work at the harbour")
        store = svc.store
        assert isinstance(store, SQLiteStore)
        with store.write() as conn:  # what smart ingest writes for a fact's slot
            conn.execute("UPDATE memories SET marks = ? WHERE id = ?", ('["slot:home"]', kept.id))
            conn.execute(
                "UPDATE memories SET marks = ? WHERE id = ?", ('["slot:work","x"]', other.id)
            )

        def marked(mark: str) -> list[str]:
            rows, _ = store.list_memories(svc.tenant_id, [svc.space_id], MemoryFilter(marks=[mark]))
            return [r.id for r in rows]

        assert marked("slot:home") == [kept.id] and marked("slot:work") == [other.id]
        with traced(store) as statements:
            marked("slot:home")
        for sql in selects(statements):
            plan = plan_of(store, sql)
            assert "memory_marks_mark" in plan and "memories_s" not in plan, plan
        with store.write() as conn:
            conn.execute("UPDATE memories SET marks = '[]' WHERE id = ?", (kept.id,))
        assert marked("slot:home") == []
        with store.write() as conn:
            conn.execute("DELETE FROM memories WHERE id = ?", (other.id,))
        left = store.conn.execute("SELECT mark FROM memory_marks ORDER BY mark").fetchall()
        assert left == []


@pytest.mark.parametrize(
    "f",
    [
        MemoryFilter(exclude_types=(MemoryType.SESSION,)),  # the default list
        MemoryFilter(memory_type=[MemoryType.INSIGHT, MemoryType.PINNED]),
        MemoryFilter(memory_type=[MemoryType.INSIGHT, MemoryType.PINNED], state=[State.ARCHIVED]),
    ],
    ids=["default", "a type", "a type and a state"],
)
def test_a_list_counts_its_matches_from_the_type_index_alone(
    tmp_path: Path, embedder: LocalEmbedder, f: MemoryFilter
) -> None:
    """The total beside every page: from the covering index on (space, type, state), never
    by reading each memory of the space (80 ms at 100,000 memories)."""
    with MemoryService(tmp_path / "home", embedder=embedder) as svc:
        svc.add("I am vegetarian")
        svc.ingest([{"role": "user", "content": "hello there"}], session_id="s1")
        store = svc.store
        assert isinstance(store, SQLiteStore)
        with traced(store) as statements:
            _, total = store.list_memories(svc.tenant_id, [svc.space_id], f)
        assert total == (0 if f.state else 1)
        count = next(s for s in selects(statements) if "COUNT(" in s.upper())
        plan = plan_of(store, count)
        assert "COVERING INDEX memories_space_type" in plan, plan
