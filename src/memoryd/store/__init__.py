"""The system of record."""

from __future__ import annotations

from pathlib import Path

from memoryd.errors import ValidationError
from memoryd.store.filters import MemoryFilter
from memoryd.store.protocol import Store
from memoryd.store.sqlite import DB_FILENAME, SQLiteStore

__all__ = ["DB_FILENAME", "MemoryFilter", "SQLiteStore", "Store", "open_store"]


def open_store(database_url: str, home: Path) -> Store:
    """The configured backend: SQLite in ``home`` by default, PostgreSQL for a
    ``postgresql://`` URL (its driver is imported only then)."""
    if database_url:
        try:
            from memoryd.store.postgres import open_postgres
        except ImportError as exc:
            raise ValidationError(
                f"a PostgreSQL database needs its driver ({exc.name} is missing): "
                "pip install 'memoryd[postgres]'"
            ) from None
        return open_postgres(database_url)
    return SQLiteStore(home / DB_FILENAME)
