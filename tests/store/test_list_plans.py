"""A list that names a few rows finds them by their own index, never by walking the space.

Without statistics SQLite orders a page by the created-at index to skip a
sort, reading every memory of the space before the last match: 0.1 s a
lookup at 100,000 memories (an upsert by key, a session's turns). The plans
here are what SQLite chooses for the statements ``list_memories`` runs.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from memoryd.embed.local import LocalEmbedder
from memoryd.models import MemoryType, State
from memoryd.service import MemoryService
from memoryd.store import MemoryFilter, SQLiteStore


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
        statements: list[str] = []
        store.conn.set_trace_callback(statements.append)
        try:
            store.list_memories(svc.tenant_id, [svc.space_id], f)
        finally:
            store.conn.set_trace_callback(None)
        selects = [s for s in statements if s.lstrip().upper().startswith("SELECT")]
        assert len(selects) == 2  # the count and the page
        for sql in selects:
            plan = " | ".join(r[3] for r in store.conn.execute(f"EXPLAIN QUERY PLAN {sql}"))
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
        statements: list[str] = []
        store.conn.set_trace_callback(statements.append)
        store.list_memories(svc.tenant_id, [svc.space_id], f, limit=1, with_total=False)
        store.conn.set_trace_callback(None)
        page = next(s for s in statements if s.lstrip().upper().startswith("SELECT"))
        plan = " | ".join(r[3] for r in store.conn.execute(f"EXPLAIN QUERY PLAN {page}"))
        assert "memories_space_key" in plan, plan
