"""What a memory costs on disk: the embedding cache shares its pages, and a home
migrated from an older schema keeps its cached vectors."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

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
