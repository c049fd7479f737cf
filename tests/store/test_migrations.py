"""Migrations are recorded by name: one that lands after a higher-numbered one still runs."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from memoryd.store import database
from memoryd.store.sqlite import SQLiteStore


def columns(path: Path, table: str) -> set[str]:
    with sqlite3.connect(path) as conn:
        return {r[1] for r in conn.execute(f"PRAGMA table_info({table})")}


def test_a_migration_written_beside_a_later_one_still_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scripts = database.migration_scripts()
    seventh = next(s for s in scripts if s.name.startswith("0007_"))
    # the migrations that build on the seventh's column came with it
    without = [s for s in scripts if s is not seventh and "marks" not in s.read_text()]
    assert len(without) < len(scripts) - 1  # memory_marks (0020) is one of them
    path = tmp_path / "memoryd.db"
    # a release that had every migration but the seventh (written on another branch)
    monkeypatch.setattr(database, "migration_scripts", lambda: without)
    SQLiteStore(path).close()
    assert "marks" not in columns(path, "memories")
    monkeypatch.setattr(database, "migration_scripts", lambda: scripts)
    SQLiteStore(path).close()
    assert "marks" in columns(path, "memories")
    with sqlite3.connect(path) as conn:
        names = [r[0] for r in conn.execute("SELECT name FROM schema_migrations ORDER BY name")]
        assert names == [s.name for s in scripts]
        assert conn.execute("PRAGMA user_version").fetchone()[0] == len(scripts)
    SQLiteStore(path).close()  # opening again applies nothing twice


def test_a_database_from_before_the_record_keeps_its_migrations(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scripts = database.migration_scripts()
    path = tmp_path / "memoryd.db"
    monkeypatch.setattr(database, "migration_scripts", lambda: scripts[:6])
    SQLiteStore(path).close()
    with sqlite3.connect(path) as conn:  # as the runner before the record left it
        conn.execute("DROP TABLE schema_migrations")
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 6
    monkeypatch.setattr(database, "migration_scripts", lambda: scripts)
    SQLiteStore(path).close()  # the first six are not run again (they would fail: tables exist)
    assert "marks" in columns(path, "memories")
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT COUNT(*) FROM schema_migrations").fetchone()[0] == len(scripts)
