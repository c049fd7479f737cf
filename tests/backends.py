"""Running a directory's tests on both backends (fixtures in tests/conftest.py)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from memoryd.store import SQLiteStore, Store
from memoryd.store.postgres import PostgresStore


def on_backend(
    home: Path, backend: str, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """``home``, with ``MEMORYD_DATABASE_URL`` naming a fresh database for PostgreSQL:
    a directory's conftest overrides ``home`` with this to run its tests on both."""
    if backend == "postgres":
        monkeypatch.setenv("MEMORYD_DATABASE_URL", request.getfixturevalue("postgres_url"))
    return home


def rows(
    store: Store, sql: str, params: Sequence[Any] = (), *, postgres: str | None = None
) -> list[tuple[Any, ...]]:
    """A test's own look at the tables, on either backend: ``sql`` in SQLite's dialect
    (``?`` placeholders), ``postgres`` where PostgreSQL's differs in more than those."""
    if isinstance(store, SQLiteStore):
        return [tuple(r) for r in store.conn.execute(sql, params).fetchall()]
    assert isinstance(store, PostgresStore)
    return store.all(postgres or sql.replace("?", "%s"), params)


def change_marker(store: Store) -> tuple[Any, ...]:
    """Something every write to the memories moves: SQLite's change counter; on
    PostgreSQL, the history's size and the latest change."""
    if isinstance(store, SQLiteStore):
        return tuple(rows(store, "SELECT value FROM counters WHERE name = 'seq'")[0])
    return rows(
        store,
        "",
        postgres="SELECT (SELECT COUNT(*) FROM memory_history), "
        "(SELECT MAX(updated_at) FROM memories), (SELECT SUM(version) FROM memories)",
    )[0]
