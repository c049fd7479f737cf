"""The system of record."""

from memoryd.store.filters import MemoryFilter
from memoryd.store.protocol import Store
from memoryd.store.sqlite import DB_FILENAME, SQLiteStore

__all__ = ["DB_FILENAME", "MemoryFilter", "SQLiteStore", "Store"]
