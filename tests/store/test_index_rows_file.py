"""A large space's rows kept on disk: the next process reads them back, then catches up.

The rows file is what a search scores and filters (its vectors mapped
copy-on-write, the rows written since in this process's memory), so the
tests hold it to the exact answer: after reading it back and catching up on every kind of
write made since (new, re-embedded, archived, expired, deleted outright), the
index holds exactly the rows an index filled from SQLite holds, with the
same vectors and windows. A file the database does not vouch for (a backup
restored, a crash mid-save, another model) is not read at all.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from memoryd.config import load_settings
from memoryd.embed.local import LocalEmbedder
from memoryd.models import Memory, MemoryType, State, utcnow
from memoryd.service import MemoryService
from memoryd.store import DB_FILENAME, index_graph
from memoryd.store.filters import MemoryFilter
from memoryd.store.vector_index import SpaceIndex

THRESHOLD = 40
ROWS = 60


def _unit(rng: np.random.Generator, n: int, dim: int) -> npt.NDArray[np.float32]:
    x = rng.standard_normal((n, dim)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


@contextmanager
def opened(home: Path, embedder: LocalEmbedder) -> Iterator[MemoryService]:
    """A new process's service over ``home`` (its own, empty, vector index)."""
    with MemoryService(
        settings=load_settings(home, hnsw_threshold=THRESHOLD), embedder=embedder
    ) as svc:
        assert svc.embedder is embedder  # binds the store to the model: the index exists
        yield svc


def space_of(svc: MemoryService) -> SpaceIndex:
    index = svc.engine.sqlite_store.index
    assert index is not None
    return index.space(svc.space_id)


def first_search(svc: MemoryService, query: npt.NDArray[np.float32]) -> list[tuple[int, float]]:
    f = MemoryFilter(live_at=utcnow())
    return svc.store.vector_search(svc.tenant_id, svc.space_id, query, 10, f)


def held(space: SpaceIndex) -> dict[int, tuple[bytes, int, int, int, int]]:
    """Each row the index holds: its vector, windows and memory type, by rowid."""
    n = space.size
    return {
        int(r): (
            space.matrix[i].tobytes(),
            int(space.ends[i]),
            int(space.starts[i]),
            int(c),
            int(space.kinds[i]),
        )
        for i, (r, c) in enumerate(zip(space.rowids[:n], space.created[:n], strict=True))
    }


def of_type(svc: MemoryService, query: npt.NDArray[np.float32], kind: MemoryType) -> list[str]:
    """The ids a search for one memory type finds, best first: filtered by the index."""
    f = MemoryFilter(live_at=utcnow(), memory_type=[kind])
    hits = svc.store.vector_search(svc.tenant_id, svc.space_id, query, 5, f)
    found = svc.store.by_rowids([r for r, _ in hits])
    assert all(found[r].memory_type is kind for r, _ in hits)
    return [found[r].id for r, _ in hits]


def insert(svc: MemoryService, vectors: npt.NDArray[np.float32], tag: str) -> list[Memory]:
    types = list(MemoryType)
    memories = [
        Memory(
            content=f"{tag} {i}",
            tenant_id=svc.tenant_id,
            space_id=svc.space_id,
            memory_type=types[i % len(types)],
        )
        for i in range(len(vectors))
    ]
    svc.store.insert_memories(memories, list(vectors))
    return memories


@pytest.fixture(autouse=True)
def rows_kept_from_few(monkeypatch: pytest.MonkeyPatch) -> None:
    """Spaces of a few rows keep their rows on disk, as a space of 200,000 does, and save
    them again once 20 rows changed (as 10,000 do there)."""
    monkeypatch.setattr(index_graph, "ROWS_FILE_MIN", ROWS)
    monkeypatch.setattr(index_graph, "SAVE_ROWS", 20)


@pytest.fixture
def saved_home(home: Path, embedder: LocalEmbedder) -> Path:
    """A home whose large space's index was built by one process and kept on disk."""
    with opened(home, embedder) as svc:
        insert(svc, _unit(np.random.default_rng(1), ROWS, embedder.dim), "first")
        first_search(svc, _unit(np.random.default_rng(2), 1, embedder.dim)[0])
        space = space_of(svc)
        assert space.rows_origin == "store" and space.graph_origin == "built"
    assert sorted(p.suffix for p in (home / f"{DB_FILENAME}-graphs").glob("*.rows"))
    return home


def test_the_next_process_reads_the_saved_rows(saved_home: Path, embedder: LocalEmbedder) -> None:
    query = _unit(np.random.default_rng(3), 1, embedder.dim)[0]
    with opened(saved_home, embedder) as svc:
        found = first_search(svc, query)
        space = space_of(svc)
        assert space.rows_origin == "saved" and space.graph_origin == "loaded"
        assert isinstance(space.matrix, np.memmap)  # mapped from the file, not read whole
        kept = held(space)
        pinned = of_type(svc, query, MemoryType.PINNED)
    shutil.rmtree(saved_home / f"{DB_FILENAME}-graphs")
    with opened(saved_home, embedder) as svc:
        assert first_search(svc, query) == found
        assert space_of(svc).rows_origin == "store"
        assert held(space_of(svc)) == kept
        assert of_type(svc, query, MemoryType.PINNED) == pinned


def test_every_write_since_the_save_is_caught_up(saved_home: Path, embedder: LocalEmbedder) -> None:
    rng = np.random.default_rng(4)
    with opened(saved_home, embedder) as svc:  # writes only: this process never searches
        listed = svc.list_memories(limit=ROWS)[0]
        ids = [m.id for m in listed]
        was = next(m for m in listed[4:] if m.memory_type is not MemoryType.PINNED)
        new = insert(svc, _unit(rng, 5, embedder.dim), "new")
        moved = _unit(rng, 1, embedder.dim)[0]
        tid, spaces = svc.tenant_id, [svc.space_id]
        svc.store.update_memory(tid, spaces, ids[0], {"content": "moved"}, vector=moved)
        svc.store.update_memory(tid, spaces, ids[1], {"state": State.ARCHIVED}, action="archive")
        gone_at = utcnow() - timedelta(days=1)
        svc.store.update_memory(tid, spaces, ids[2], {"expires_at": gone_at})
        svc.store.update_memory(tid, spaces, was.id, {"memory_type": MemoryType.PINNED})
        deleted = [ids[3], new[0].id]  # deleted outright, as an import rolled back is
        with svc.store.write() as conn:
            svc.store._bump_seq(conn)
            for memory_id in deleted:
                conn.execute("DELETE FROM memories WHERE id = ?", (memory_id,))
        reused = insert(svc, _unit(rng, 1, embedder.dim), "after the delete")
        assert space_of(svc).size == 0
    with opened(saved_home, embedder) as svc:
        hits = first_search(svc, moved)
        space = space_of(svc)
        assert space.rows_origin == "saved"
        caught_up = held(space)
        assert space.graph is not None
        assert set(space.graph.keys().tolist()) == set(caught_up)
        found = svc.store.by_rowids([r for r, _ in hits])
        assert found[hits[0][0]].id == ids[0]  # the re-embedded row, by its new vector
        assert reused[0].id in {m.id for m in svc.store.by_rowids(list(caught_up)).values()}
        retyped = svc.store.vectors_of([was.id])[was.id]  # now pinned: found as pinned only
        assert of_type(svc, retyped, MemoryType.PINNED)[0] == was.id
        assert was.id not in of_type(svc, retyped, was.memory_type)
        # a few rows to catch up: the graph is saved again, the rows are not (yet)
        assert space.unsaved == 0 and 0 < space.rows_unsaved < ROWS
    with opened(saved_home, embedder) as svc:  # rows as saved, then caught up; a newer graph
        first_search(svc, moved)
        space = space_of(svc)
        assert (space.rows_origin, space.graph_origin) == ("saved", "loaded")
        assert space.unsaved == 0  # patched against the caught-up rows: nothing to redo
        assert held(space) == caught_up
        assert space.graph is not None and set(space.graph.keys().tolist()) == set(caught_up)
    shutil.rmtree(saved_home / f"{DB_FILENAME}-graphs")
    with opened(saved_home, embedder) as svc:  # the same rows, read from SQLite
        first_search(svc, moved)
        assert space_of(svc).rows_origin == "store"
        assert held(space_of(svc)) == caught_up


@pytest.mark.parametrize("damage", ["backup restored", "no token", "truncated", "other size"])
def test_rows_the_database_does_not_vouch_for_are_not_read(
    saved_home: Path, embedder: LocalEmbedder, damage: str
) -> None:
    db = saved_home / DB_FILENAME
    rows_file = next((saved_home / f"{DB_FILENAME}-graphs").glob("*.rows"))
    backup = saved_home.parent / "backup.db"
    with opened(saved_home, embedder) as svc:
        svc.engine.sqlite_store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        shutil.copy(db, backup)
        insert(svc, _unit(np.random.default_rng(5), 30, embedder.dim), "later")
        first_search(svc, _unit(np.random.default_rng(6), 1, embedder.dim)[0])
    if damage == "backup restored":  # the rows on disk are newer than the database
        shutil.copy(backup, db)
        for side in ("-wal", "-shm"):
            Path(f"{db}{side}").unlink(missing_ok=True)
    elif damage == "no token":  # a crash after the rows were written, before they were vouched
        with opened(saved_home, embedder) as svc, svc.store.write() as conn:
            conn.execute("DELETE FROM meta WHERE key LIKE 'index_rows:%'")
    elif damage == "truncated":
        with rows_file.open("r+b") as fh:
            fh.truncate(rows_file.stat().st_size // 2)
    else:  # the same size, other bytes: the description no longer fits
        rows_file.write_bytes(b"\0" * rows_file.stat().st_size)
    with opened(saved_home, embedder) as svc:
        first_search(svc, _unit(np.random.default_rng(7), 1, embedder.dim)[0])
        space = space_of(svc)
        assert space.rows_origin == "store"
        live = svc.engine.sqlite_store.conn.execute(
            "SELECT rowid FROM memories WHERE space_id = ? AND state = 'active'", (svc.space_id,)
        ).fetchall()
        assert set(held(space)) == {r[0] for r in live}
