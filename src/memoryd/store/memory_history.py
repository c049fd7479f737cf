"""A memory's history in the SQLite store: the fields each change moved, and who moved them.

Written in the transaction of the change itself, so a memory's history is
never behind the memory; exported and imported with the memories
(:mod:`memoryd.store.history_rows`, shared with PostgreSQL).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from typing import Any

from memoryd.models import Memory
from memoryd.store.database import Database
from memoryd.store.history_rows import (
    change_values,
    history_entry,
    history_insert,
    imported_values,
)

HISTORY_INSERT = history_insert("?")


class MemoryHistory(Database):
    def _history(
        self, conn: sqlite3.Connection, old: Memory, new: Memory, action: str, actor: str | None
    ) -> None:
        conn.execute(HISTORY_INSERT, change_values(old, new, action, actor))

    def space_history(self, tenant_id: str, space_id: str) -> Iterator[dict[str, Any]]:
        """Every history row of a space's memories, oldest first (export)."""
        rows = self.conn.execute(
            "SELECT memory_id, action, old_value, new_value, actor, at FROM memory_history "
            "WHERE tenant_id = ? AND space_id = ? ORDER BY id",
            (tenant_id, space_id),
        )
        for memory_id, *entry in rows:
            yield {"memory_id": memory_id, **history_entry(*entry)}

    def add_history(self, tenant_id: str, space_id: str, rows: Sequence[dict[str, Any]]) -> None:
        """History rows as an export holds them (``at`` in microseconds)."""
        with self.write() as conn:
            conn.executemany(
                HISTORY_INSERT, [imported_values(tenant_id, space_id, r) for r in rows]
            )

    def history(self, memory_id: str) -> list[dict[str, Any]]:
        rows = self.conn.execute(
            "SELECT action, old_value, new_value, actor, at FROM memory_history "
            "WHERE memory_id = ? ORDER BY id",
            (memory_id,),
        ).fetchall()
        return [history_entry(*row) for row in rows]
