"""Reading memories from PostgreSQL: by id or prefix, by filter, page by page.

Every read is scoped by tenant and space (``filters.where_clause``), as in
the SQLite store, whose reads these answer like for like.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from memoryd.models import Memory, State
from memoryd.store.filters import MemoryFilter
from memoryd.store.postgres.database import Conn, PgDatabase
from memoryd.store.postgres.filters import where_clause
from memoryd.store.rows import SELECT_COLUMNS, in_rowid_order, row_to_memory
from memoryd.store.scopes import Viewer
from memoryd.terms import SORT_COLUMNS


class PgMemoryReads(PgDatabase):
    def _get(
        self,
        conn: Conn,
        tenant_id: str,
        space_ids: Sequence[str],
        memory_id: str,
        lock: bool = False,
        viewer: Viewer | None = None,
    ) -> Memory | None:
        where, params = where_clause(
            tenant_id, space_ids, MemoryFilter(ids=[memory_id], state=list(State), viewer=viewer)
        )
        row = conn.execute(
            f"SELECT {SELECT_COLUMNS} FROM memories m WHERE {where}"
            + (" FOR UPDATE OF m" if lock else ""),
            params,
        ).fetchone()
        return None if row is None else row_to_memory(row)

    def get(
        self,
        tenant_id: str,
        space_ids: Sequence[str],
        memory_id: str,
        viewer: Viewer | None = None,
    ) -> Memory | None:
        """The memory, if the tenant (and ``viewer``, an agent, when given) may see it."""
        with self.pool.connection() as conn:
            return self._get(conn, tenant_id, space_ids, memory_id, viewer=viewer)

    def memory_ids_like(
        self,
        tenant_id: str,
        space_ids: Sequence[str],
        prefix: str,
        limit: int,
        viewer: Viewer | None = None,
    ) -> list[str]:
        where, params = where_clause(
            tenant_id, space_ids, MemoryFilter(state=list(State), viewer=viewer)
        )
        return self._ids_with_prefix("memories m", "m.id", prefix, where, params, limit)

    def ids_with_prefix(
        self, table: str, column: str, prefix: str, where: str, params: Sequence[Any], limit: int
    ) -> list[str]:
        """Values of ``column`` starting with ``prefix``; ``where`` is a simple condition
        written with ``?`` placeholders, as callers write it for either backend."""
        return self._ids_with_prefix(table, column, prefix, where.replace("?", "%s"), params, limit)

    def _ids_with_prefix(
        self, table: str, column: str, prefix: str, where: str, params: Sequence[Any], limit: int
    ) -> list[str]:
        rows = self.all(
            f"SELECT {column} FROM {table} WHERE left({column}, %s) = %s AND {where} "
            f'ORDER BY {column} COLLATE "C" LIMIT %s',
            (len(prefix), prefix, *params, limit),
        )
        return [r[0] for r in rows]

    def memory_id_taken(self, memory_id: str) -> bool:
        return self.one("SELECT 1 FROM memories WHERE id = %s", (memory_id,)) is not None

    def vectors_of(self, memory_ids: Sequence[str]) -> dict[str, npt.NDArray[np.float32]]:
        rows = self.all(
            "SELECT id, vector FROM memories WHERE id = ANY(%s) AND vector IS NOT NULL",
            (list(memory_ids),),
        )
        return {r[0]: np.asarray(r[1], dtype=np.float32) for r in rows}

    def get_vector(self, memory_id: str) -> npt.NDArray[np.float32] | None:
        row = self.one("SELECT vector FROM memories WHERE id = %s", (memory_id,))
        return None if row is None or row[0] is None else np.asarray(row[0], dtype=np.float32)

    def list_memories(
        self,
        tenant_id: str,
        space_ids: Sequence[str],
        f: MemoryFilter,
        sort: str = "created_at",
        order: str = "desc",
        limit: int = 20,
        offset: int = 0,
        with_total: bool = True,
    ) -> tuple[list[Memory], int]:
        """A page of memories and how many match (-1 without ``with_total``)."""
        where, params = where_clause(tenant_id, space_ids, f)
        column = sort if sort in SORT_COLUMNS else "created_at"
        direction = "DESC" if order == "desc" else "ASC"
        with self.read() as conn:
            total = (
                conn.execute(f"SELECT COUNT(*) FROM memories m WHERE {where}", params).fetchone()
                if with_total
                else None
            )
            rows = conn.execute(
                f"SELECT {SELECT_COLUMNS} FROM memories m WHERE {where} "
                f"ORDER BY m.{column} {direction}, m.rowid {direction} LIMIT %s OFFSET %s",
                (*params, limit, offset),
            ).fetchall()
        return [row_to_memory(r) for r in rows], -1 if total is None else int(total[0])

    def count(self, tenant_id: str, space_ids: Sequence[str], f: MemoryFilter) -> int:
        where, params = where_clause(tenant_id, space_ids, f)
        row = self.one(f"SELECT COUNT(*) FROM memories m WHERE {where}", params)
        return 0 if row is None else int(row[0])

    def iter_all(
        self,
        tenant_id: str,
        space_ids: Sequence[str],
        batch: int = 1000,
        viewer: Viewer | None = None,
    ) -> Iterator[Memory]:
        """Every memory in any state (that ``viewer`` may see), in insertion order (export)."""
        where, params = where_clause(
            tenant_id, space_ids, MemoryFilter(state=list(State), viewer=viewer)
        )
        sql = (
            f"SELECT {SELECT_COLUMNS}, m.rowid FROM memories m WHERE {where} "
            "AND m.rowid > %s ORDER BY m.rowid LIMIT %s"
        )
        yield from in_rowid_order(lambda last: self.all(sql, (*params, last, batch)))

    def by_rowids(self, rowids: Sequence[int]) -> dict[int, Memory]:
        rows = self.all(
            f"SELECT {SELECT_COLUMNS}, m.rowid FROM memories m WHERE m.rowid = ANY(%s)",
            (list(rowids),),
        )
        return {int(r[-1]): row_to_memory(r) for r in rows}
