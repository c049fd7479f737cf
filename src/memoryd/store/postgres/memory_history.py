"""A memory's history on PostgreSQL: the fields each change moved, and who moved them.

Written in the transaction of the change itself, as in the SQLite store
(:mod:`memoryd.store.history_rows`, shared by both).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from memoryd.models import Memory
from memoryd.store.history_rows import (
    change_values,
    history_entry,
    history_insert,
    imported_values,
)
from memoryd.store.postgres.database import Conn, PgDatabase
from memoryd.store.sessions import EXPORT_BATCH

HISTORY_INSERT = history_insert("%s")


class PgMemoryHistory(PgDatabase):
    def _history(
        self, conn: Conn, old: Memory, new: Memory, action: str, actor: str | None
    ) -> None:
        conn.execute(HISTORY_INSERT, change_values(old, new, action, actor))

    def space_history(self, tenant_id: str, space_id: str) -> Iterator[dict[str, Any]]:
        """Every history row of a space's memories, oldest first (export)."""
        last = 0
        while True:  # a page at a time, keyed by id: an export's memory stays bounded
            rows = self.all(
                "SELECT id, memory_id, action, old_value, new_value, actor, at FROM "
                "memory_history WHERE tenant_id = %s AND space_id = %s AND id > %s "
                "ORDER BY id LIMIT %s",
                (tenant_id, space_id, last, EXPORT_BATCH),
            )
            for _, memory_id, *entry in rows:
                yield {"memory_id": memory_id, **history_entry(*entry)}
            if len(rows) < EXPORT_BATCH:
                return
            last = rows[-1][0]

    def add_history(self, tenant_id: str, space_id: str, rows: Sequence[dict[str, Any]]) -> None:
        with self.write() as conn, conn.cursor() as cur:
            cur.executemany(HISTORY_INSERT, [imported_values(tenant_id, space_id, r) for r in rows])

    def history(self, memory_id: str) -> list[dict[str, Any]]:
        rows = self.all(
            "SELECT action, old_value, new_value, actor, at FROM memory_history "
            "WHERE memory_id = %s ORDER BY id",
            (memory_id,),
        )
        return [history_entry(*row) for row in rows]
