"""The system of record."""

from __future__ import annotations

from pathlib import Path

from memoryd.store.filters import MemoryFilter
from memoryd.store.protocol import Store
from memoryd.store.sqlite import DB_FILENAME, SQLiteStore

__all__ = ["DB_FILENAME", "MemoryFilter", "SQLiteStore", "Store", "open_store"]


def open_store(database_url: str, home: Path) -> Store:
    """The configured backend: SQLite in ``home`` by default, PostgreSQL for a
    ``postgresql://`` URL (its driver is imported only then)."""
    if database_url:
        from memoryd.extras import extra

        with extra("postgres", "a PostgreSQL database"):
            from memoryd.store.postgres import open_postgres
        return open_postgres(database_url)
    return SQLiteStore(home / DB_FILENAME)
