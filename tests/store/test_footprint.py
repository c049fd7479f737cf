"""What a memory costs on disk: the embedding cache shares its pages, and a home
migrated from an older schema keeps its cached vectors."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import numpy as np
import pytest

from memoryd.embed.local import LocalEmbedder
from memoryd.service import MemoryService
from memoryd.store import database
from memoryd.store.sqlite import SQLiteStore

MEMORIES = 120


def _pages(path: Path, table: str) -> tuple[int, int]:
    """(pages, rows) of a table and its overflow pages, by SQLite's own page stats."""
    with closing(sqlite3.connect(path)) as conn:
        pages = conn.execute("SELECT COUNT(*) FROM dbstat WHERE name = ?", (table,)).fetchone()
        rows = conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()
    return int(pages[0]), int(rows[0])


def test_a_cached_vector_does_not_take_a_page_of_its_own(
    tmp_path: Path, embedder: LocalEmbedder
) -> None:
    with MemoryService(tmp_path / "home", embedder=embedder) as svc:
        for i in range(MEMORIES):
            svc.add(f"Note {i}: the courier for parcel {i * 7} comes on day {i % 28 + 1}.")
    pages, rows = _pages(tmp_path / "home" / "memoryd.db", "embed_cache")
    assert rows >= MEMORIES
    assert pages <= rows * 0.6  # two vectors a page, not one plus an overflow page each


def test_cached_vectors_survive_the_move_to_the_new_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scripts = database.migration_scripts()
    before = [s for s in scripts if s.name < "0023_"]
    path = tmp_path / "memoryd.db"
    monkeypatch.setattr(database, "migration_scripts", lambda: before)
    SQLiteStore(path).close()
    with closing(sqlite3.connect(path)) as conn, conn:
        conn.execute("INSERT INTO embed_cache(model, hash, vector) VALUES ('m', x'01', x'0203')")
    monkeypatch.setattr(database, "migration_scripts", lambda: scripts)
    SQLiteStore(path).close()
    with closing(sqlite3.connect(path)) as conn:
        assert conn.execute("SELECT model, hash, vector FROM embed_cache").fetchall() == [
            ("m", b"\x01", b"\x02\x03")
        ]
        with pytest.raises(sqlite3.IntegrityError):
            conn.execute("INSERT INTO embed_cache(model, hash, vector) VALUES ('m', x'01', x'')")


def test_a_vector_is_stored_in_two_bytes_a_number(tmp_path: Path, embedder: LocalEmbedder) -> None:
    with MemoryService(tmp_path / "home", embedder=embedder) as svc:
        memory = svc.add("The spare key is under the third flowerpot")
        vector = svc.store.get_vector(memory.id)
        assert vector is not None and vector.dtype == np.float32
        assert np.isclose(np.linalg.norm(vector), 1.0)
        exact = embedder.embed_one(memory.content)
        assert float(vector @ exact) > 0.9999
    with closing(sqlite3.connect(tmp_path / "home" / "memoryd.db")) as conn:
        sizes = {r[0] for r in conn.execute("SELECT length(vector) FROM memories")}
        cached = {r[0] for r in conn.execute("SELECT length(vector) FROM embed_cache")}
    assert sizes == cached == {2 * embedder.dim}


def test_vectors_of_an_older_home_are_rewritten_and_still_found(
    tmp_path: Path, embedder: LocalEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    scripts = database.migration_scripts()
    monkeypatch.setattr(
        database, "migration_scripts", lambda: [s for s in scripts if s.name < "0024_"]
    )
    home = tmp_path / "home"
    texts = ["The spare key is under the third flowerpot", "Choir practice moved to Thursdays"]
    with MemoryService(home, embedder=embedder) as svc:
        ids = [svc.add(t).id for t in texts]
    # as a release before schema v24 wrote them: four bytes a number, the cache too
    exact = embedder.embed(texts)
    with closing(sqlite3.connect(home / "memoryd.db")) as conn, conn:
        for memory_id, vector in zip(ids, exact, strict=True):
            conn.execute(
                "UPDATE memories SET vector = ? WHERE id = ?", (vector.tobytes(), memory_id)
            )
        conn.execute("UPDATE embed_cache SET vector = ?", (exact[0].tobytes(),))
    monkeypatch.setattr(database, "migration_scripts", lambda: scripts)
    with MemoryService(home, embedder=embedder) as svc:
        for memory_id, vector in zip(ids, exact, strict=True):
            stored = svc.store.get_vector(memory_id)
            assert stored is not None and float(stored @ vector) > 0.9999
        hits = svc.search("where is the spare key", touch=False).results
        assert hits[0].memory.id == ids[0]
        # a cached vector of the old width is read as it was written
        np.testing.assert_array_equal(svc.engine.embed([texts[0]])[0], exact[0])
    with closing(sqlite3.connect(home / "memoryd.db")) as conn:
        assert {r[0] for r in conn.execute("SELECT length(vector) FROM memories")} == {
            2 * embedder.dim
        }
