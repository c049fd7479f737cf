"""Reading memories from the SQLite store: by id or prefix, by filter, page by page.

Every read is scoped by tenant and space (``filters.where_clause``). A read
that names a few rows (an id, a prefix, a key, a session) is written so that
SQLite finds them by their own index, never by walking the space: SQLite has
no statistics here to choose well (``tests/store/test_list_plans.py``).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from memoryd.models import Memory, State
from memoryd.store.database import Database
from memoryd.store.filters import MemoryFilter, where_clause
from memoryd.store.rows import SELECT_COLUMNS, blob_to_vector, in_rowid_order, row_to_memory
from memoryd.store.scopes import Viewer
from memoryd.terms import SORT_COLUMNS

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

# sorts after every string that starts with a given prefix (BINARY collation, UTF-8)
PREFIX_END = "\U0010ffff"
# ids sharing a prefix, across the whole store, looked at before the access rule is applied
PREFIX_CANDIDATES = 1000


class MemoryReads(Database):
    def _get(
        self,
        conn: sqlite3.Connection,
        tenant_id: str,
        space_ids: Sequence[str],
        memory_id: str,
        viewer: Viewer | None = None,
    ) -> Memory | None:
        where, params = where_clause(
            tenant_id, space_ids, MemoryFilter(ids=[memory_id], state=list(State), viewer=viewer)
        )
        row = conn.execute(
            f"SELECT {SELECT_COLUMNS} FROM memories m WHERE {where}", params
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
        return self._get(self.conn, tenant_id, space_ids, memory_id, viewer)

    def memory_ids_like(
        self,
        tenant_id: str,
        space_ids: Sequence[str],
        prefix: str,
        limit: int,
        viewer: Viewer | None = None,
    ) -> list[str]:
        """Ids of memories (any state) that start with ``prefix``, in id order.

        The ids come from a range of the id index first, then the access rule
        keeps those the caller may see: asked in one statement, SQLite (with no
        statistics) would rather walk every memory of the space by its space
        index and test each id (80 ms at 100,000 memories, for every get,
        update or forget). A prefix of four or more characters matches a few
        ids in a whole store; past ``PREFIX_CANDIDATES`` the one statement runs.
        """
        where, params = where_clause(
            tenant_id, space_ids, MemoryFilter(state=list(State), viewer=viewer)
        )
        candidates = [
            r[0]
            for r in self.conn.execute(
                "SELECT id FROM memories WHERE id >= ? AND id < ? ORDER BY id LIMIT ?",
                (prefix, prefix + PREFIX_END, PREFIX_CANDIDATES + 1),
            )
        ]
        if len(candidates) > PREFIX_CANDIDATES:
            return self.ids_with_prefix("memories m", "m.id", prefix, where, params, limit)
        if not candidates:
            return []
        marks = ", ".join("?" for _ in candidates)
        return [
            r[0]
            for r in self.conn.execute(
                f"SELECT m.id FROM memories m WHERE m.id IN ({marks}) AND {where} "
                "ORDER BY m.id LIMIT ?",
                (*candidates, *params, limit),
            )
        ]

    def ids_with_prefix(
        self, table: str, column: str, prefix: str, where: str, params: Sequence[Any], limit: int
    ) -> list[str]:
        """Values of ``column`` starting with ``prefix``: a range scan of its unique index."""
        rows = self.conn.execute(
            f"SELECT {column} FROM {table} WHERE {column} >= ? AND {column} < ? AND {where} "
            f"ORDER BY {column} LIMIT ?",
            (prefix, prefix + PREFIX_END, *params, limit),
        ).fetchall()
        return [r[0] for r in rows]

    def memory_id_taken(self, memory_id: str) -> bool:
        """Whether any space holds this id (ids are unique across the store)."""
        return (
            self.conn.execute("SELECT 1 FROM memories WHERE id = ?", (memory_id,)).fetchone()
            is not None
        )

    def vectors_of(self, memory_ids: Sequence[str]) -> dict[str, npt.NDArray[np.float32]]:
        """The stored vectors of these memories, by id, in one query."""
        marks = ", ".join("?" for _ in memory_ids)
        rows = self.conn.execute(
            f"SELECT id, vector FROM memories WHERE id IN ({marks}) AND vector IS NOT NULL",
            list(memory_ids),
        ).fetchall()
        return {r[0]: vector for r in rows if (vector := blob_to_vector(r[1])) is not None}

    def get_vector(self, memory_id: str) -> npt.NDArray[np.float32] | None:
        row = self.conn.execute("SELECT vector FROM memories WHERE id = ?", (memory_id,)).fetchone()
        return None if row is None else blob_to_vector(row[0])

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
        """A page of memories and how many match (-1 without ``with_total``: counting
        every match costs more than the page on a large store)."""
        where, params = where_clause(tenant_id, space_ids, f)
        column = sort if sort in SORT_COLUMNS else "created_at"
        direction = "DESC" if order == "desc" else "ASC"
        # A filter that names a few rows (a session, a key) finds them by their own index
        # and sorts them. Without statistics SQLite would rather walk the created-at index
        # to skip the sort, which reads every memory of the space before the last match
        # (0.1 s at 100,000 memories): "+" keeps the sort column off any index.
        ordered = f"+m.{column}" if f.pinpoints() else f"m.{column}"
        with self.read() as conn:
            total = (
                conn.execute(f"SELECT COUNT(*) FROM memories m WHERE {where}", params).fetchone()[0]
                if with_total
                else -1
            )
            rows = conn.execute(
                f"SELECT {SELECT_COLUMNS} FROM memories m WHERE {where} "
                f"ORDER BY {ordered} {direction}, m.rowid {direction} LIMIT ? OFFSET ?",
                (*params, limit, offset),
            ).fetchall()
        return [row_to_memory(r) for r in rows], int(total)

    def count(self, tenant_id: str, space_ids: Sequence[str], f: MemoryFilter) -> int:
        where, params = where_clause(tenant_id, space_ids, f)
        return int(
            self.conn.execute(f"SELECT COUNT(*) FROM memories m WHERE {where}", params).fetchone()[
                0
            ]
        )

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
            f"SELECT {SELECT_COLUMNS}, m.rowid FROM memories m WHERE {where} AND m.rowid > ? "
            "ORDER BY m.rowid LIMIT ?"
        )
        # a generator itself, so that an error while it is walked leaves as StorageError
        # (map_storage_errors wraps a generator's iteration, not a returned one's)
        yield from in_rowid_order(
            lambda last: self.conn.execute(sql, (*params, last, batch)).fetchall()
        )

    def by_rowids(self, rowids: Sequence[int]) -> dict[int, Memory]:
        out: dict[int, Memory] = {}
        for start in range(0, len(rowids), 500):
            chunk = rowids[start : start + 500]
            marks = ", ".join("?" for _ in chunk)
            for row in self.conn.execute(
                f"SELECT {SELECT_COLUMNS}, m.rowid FROM memories m WHERE m.rowid IN ({marks})",
                chunk,
            ):
                out[int(row[-1])] = row_to_memory(row)
        return out
