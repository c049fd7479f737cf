"""Counts over the memories a tenant may see, computed in SQL (stats pages scale with the store)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memoryd.models import State
from memoryd.store.database import Database
from memoryd.store.filters import MemoryFilter, where_clause
from memoryd.store.scopes import Viewer

GROUPABLE = frozenset(
    (
        "memory_type",
        "category",
        "tier",
        "state",
        "space_id",
        "visibility",
        "owner_agent_id",
    )
)


# the columns a daily count may be grouped by (they go into the SQL, so a fixed list)
DAILY_GROUPS = ("memory_type", "category")
# what the stats overview counts memories by: all at once, in one pass over the table
# (one count_by is a pass of its own, and each pass reads every row of a large store)
BREAKDOWN = ("memory_type", "category", "tier", "state", "space_id", "visibility", "owner_agent_id")


def breakdown_query(where: str) -> str:
    """Rows of ``BREAKDOWN``'s values with their count and the sums the averages need."""
    columns = ", ".join(f"m.{c}" for c in BREAKDOWN)
    return (
        f"SELECT {columns}, COUNT(*), SUM(m.importance), SUM(m.confidence), "
        f"SUM(m.access_count) FROM memories m WHERE {where} GROUP BY {columns}"
    )


# background work by kind and state, for an operator's metrics: one query for both backends
JOB_COUNTS = (
    "SELECT kind, status, COUNT(*) FROM tasks GROUP BY kind, status "
    "UNION ALL SELECT 'import', status, COUNT(*) FROM import_tasks GROUP BY status"
)


class AggregateStore(Database):
    def job_counts(self) -> list[tuple[str, str, int]]:
        """Tasks (smart ingest, consolidation, …) and file imports, by kind and status."""
        return [(str(k), str(s), int(n)) for k, s, n in self.conn.execute(JOB_COUNTS)]

    def store_bytes(self) -> int:
        """What the database takes on disk: its file and its write-ahead log."""
        wal = self.path.with_name(self.path.name + "-wal")
        return sum(p.stat().st_size for p in (self.path, wal) if p.exists())

    def _scope(
        self,
        tenant_id: str,
        space_ids: Sequence[str],
        deleted: bool = False,
        viewer: Viewer | None = None,
    ) -> tuple[str, list[Any]]:
        """Every memory but deleted ones (unless ``deleted``), conversation turns included."""
        states = list(State) if deleted else None
        return where_clause(
            tenant_id, space_ids, MemoryFilter(state=states, exclude_types=(), viewer=viewer)
        )

    def count_by(
        self,
        tenant_id: str,
        space_ids: Sequence[str],
        column: str,
        deleted: bool = False,
        viewer: Viewer | None = None,
    ) -> dict[str, int]:
        """Counts by ``column``; deleted memories are counted only when ``deleted``."""
        if column not in GROUPABLE:
            raise ValueError(f"cannot group memories by {column!r}")
        where, params = self._scope(tenant_id, space_ids, deleted, viewer)
        rows = self.conn.execute(
            f"SELECT m.{column}, COUNT(*) FROM memories m WHERE {where} GROUP BY m.{column} "
            f"ORDER BY COUNT(*) DESC, m.{column}",
            params,
        )
        return {str(k): int(v) for k, v in rows}

    def breakdown(
        self, tenant_id: str, space_ids: Sequence[str], viewer: Viewer | None = None
    ) -> list[tuple[Any, ...]]:
        """Every memory, deleted ones too, counted by all of ``BREAKDOWN`` at once."""
        where, params = self._scope(tenant_id, space_ids, deleted=True, viewer=viewer)
        return [tuple(row) for row in self.conn.execute(breakdown_query(where), params)]

    def totals(
        self, tenant_id: str, space_ids: Sequence[str], viewer: Viewer | None = None
    ) -> dict[str, Any]:
        where, params = self._scope(tenant_id, space_ids, viewer=viewer)
        total, importance, confidence, accesses, last = self.conn.execute(
            "SELECT COUNT(*), AVG(importance), AVG(confidence), SUM(access_count), "
            f"MAX(updated_at) FROM memories m WHERE {where}",
            params,
        ).fetchone()
        return {
            "total": int(total),
            "avg_importance": round(importance or 0.0, 4),
            "avg_confidence": round(confidence or 0.0, 4),
            "total_access_count": int(accesses or 0),
            "last_updated_us": last,
        }

    def daily_counts(
        self,
        tenant_id: str,
        space_ids: Sequence[str],
        since_us: int,
        by: str = "memory_type",
        viewer: Viewer | None = None,
    ) -> list[tuple[str, str, int]]:
        """(UTC date, memory type or category, count) of memories created since ``since_us``."""
        if by not in DAILY_GROUPS:
            raise ValueError(f"daily counts by {by!r}: one of {', '.join(DAILY_GROUPS)}")
        where, params = self._scope(tenant_id, space_ids, viewer=viewer)
        rows = self.conn.execute(
            f"SELECT date(m.created_at / 1000000, 'unixepoch') AS day, m.{by}, COUNT(*) "
            f"FROM memories m WHERE {where} AND m.created_at >= ? GROUP BY day, m.{by} "
            f"ORDER BY day DESC, m.{by}",
            (*params, since_us),
        ).fetchall()
        return [(str(d), str(t), int(n)) for d, t, n in rows]

    def tag_counts(
        self, tenant_id: str, space_ids: Sequence[str], viewer: Viewer | None = None
    ) -> list[tuple[str, int, int]]:
        """(tag, memories carrying it, spaces it appears in), most used first."""
        where, params = self._scope(tenant_id, space_ids, viewer=viewer)
        rows = self.conn.execute(
            "SELECT t.value, COUNT(*), COUNT(DISTINCT m.space_id) FROM memories m, "
            f"json_each(m.tags) t WHERE {where} GROUP BY t.value ORDER BY COUNT(*) DESC, t.value",
            params,
        ).fetchall()
        return [(str(tag), int(n), int(spaces)) for tag, n, spaces in rows]

    def agent_counts(
        self, tenant_id: str, space_ids: Sequence[str], viewer: Viewer | None = None
    ) -> list[tuple[str, str, str, int, int, int]]:
        """(agent, space, category, count, last update in µs, shared copies) per group."""
        where, params = self._scope(tenant_id, space_ids, viewer=viewer)
        rows = self.conn.execute(
            "SELECT m.owner_agent_id, m.space_id, m.category, COUNT(*), MAX(m.updated_at), "
            f"SUM(m.provenance IS NOT NULL) FROM memories m WHERE {where} "
            "GROUP BY m.owner_agent_id, m.space_id, m.category",
            params,
        ).fetchall()
        return [(str(a), str(s), str(c), int(n), int(t), int(sh)) for a, s, c, n, t, sh in rows]

    def shared_in(
        self, tenant_id: str, space_ids: Sequence[str], viewer: Viewer | None = None
    ) -> int:
        where, params = self._scope(tenant_id, space_ids, viewer=viewer)
        return int(
            self.conn.execute(
                f"SELECT COUNT(*) FROM memories m WHERE {where} AND m.provenance IS NOT NULL",
                params,
            ).fetchone()[0]
        )
