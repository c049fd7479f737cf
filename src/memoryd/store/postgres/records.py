"""Session messages, the embedding cache, turns waiting for a vector, settings and the
stats counts, on PostgreSQL (the SQLite counterparts: ``store.sessions``,
``store.pending``, ``store.settings``, ``store.aggregates``)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from memoryd.models import Memory, State, utcnow
from memoryd.store.aggregates import DAILY_GROUPS, GROUPABLE, JOB_COUNTS, breakdown_query
from memoryd.store.filters import MemoryFilter
from memoryd.store.postgres.database import Conn, PgDatabase
from memoryd.store.postgres.filters import where_clause
from memoryd.store.rows import SELECT_COLUMNS, row_to_memory, to_us
from memoryd.store.scopes import Viewer
from memoryd.store.sessions import EXPORT_BATCH, MESSAGE_KEYS, MESSAGE_PAGE, RawMessage


class PgRecords(PgDatabase):
    # ------------------------------------------------------------------ session messages
    def add_session_messages(
        self,
        conn: Conn,
        tenant_id: str,
        space_id: str,
        session_id: str,
        agent_id: str | None,
        messages: Sequence[RawMessage],
    ) -> list[bool]:
        """Store raw messages; False marks a repeat already in the session."""
        now = to_us(utcnow())
        fresh = []
        for m in messages:
            cursor = conn.execute(
                "INSERT INTO session_messages(tenant_id, space_id, session_id, agent_id, role, "
                "content, msg_hash, said_at, stored_at, memory_id) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
                (
                    tenant_id,
                    space_id,
                    session_id,
                    agent_id,
                    m.role,
                    m.content,
                    m.digest,
                    m.said_at,
                    m.stored_at if m.stored_at is not None else now,
                    m.memory_id,
                ),
            )
            fresh.append(cursor.rowcount == 1)
        return fresh

    def recent_hashes(
        self, tenant_id: str, space_id: str, digests: Sequence[str], since_us: int
    ) -> set[str]:
        rows = self.all(
            "SELECT msg_hash FROM session_messages WHERE space_id = %s AND tenant_id = %s "
            "AND msg_hash = ANY(%s) AND stored_at >= %s",
            (space_id, tenant_id, list(dict.fromkeys(digests)), since_us),
        )
        return {r[0] for r in rows}

    def session_messages(
        self, tenant_id: str, space_id: str, session_id: str | None = None
    ) -> list[dict[str, Any]]:
        query = (
            "SELECT session_id, agent_id, role, content, said_at, stored_at, memory_id "
            "FROM session_messages WHERE tenant_id = %s AND space_id = %s"
        )
        params: list[Any] = [tenant_id, space_id]
        if session_id is not None:
            query += " AND session_id = %s"
            params.append(session_id)
        rows = self.all(query + " ORDER BY id", params)
        keys = ("session_id", "agent_id", "role", "content", "said_at", "stored_at", "memory_id")
        return [dict(zip(keys, r, strict=True)) for r in rows]

    def iter_session_messages(
        self, tenant_id: str, space_id: str, batch: int = EXPORT_BATCH
    ) -> Iterator[dict[str, Any]]:
        last = 0
        while True:
            rows = self.all(MESSAGE_PAGE, (tenant_id, space_id, last, batch))
            yield from (dict(zip(MESSAGE_KEYS, r[1:], strict=True)) for r in rows)
            if len(rows) < batch:
                return
            last = rows[-1][0]

    def list_sessions(
        self, tenant_id: str, space_id: str, limit: int, offset: int = 0
    ) -> tuple[list[dict[str, Any]], int]:
        where = "tenant_id = %s AND space_id = %s"
        with self.read() as conn:
            total = conn.execute(
                f"SELECT COUNT(DISTINCT session_id) FROM session_messages WHERE {where}",
                (tenant_id, space_id),
            ).fetchone()
            rows = conn.execute(
                "SELECT session_id, MAX(agent_id), COUNT(*), MIN(COALESCE(said_at, stored_at)), "
                "MAX(COALESCE(said_at, stored_at)) "
                f"FROM session_messages WHERE {where} GROUP BY session_id "
                "ORDER BY MAX(id) DESC LIMIT %s OFFSET %s",
                (tenant_id, space_id, limit, offset),
            ).fetchall()
        keys = ("session_id", "agent_id", "turns", "first_said_at", "last_said_at")
        return [dict(zip(keys, r, strict=True)) for r in rows], 0 if total is None else total[0]

    def last_session_line(self, tenant_id: str, space_id: str, session_id: str) -> str | None:
        row = self.one(
            "SELECT role, content FROM session_messages WHERE tenant_id = %s AND space_id = %s "
            "AND session_id = %s ORDER BY id DESC LIMIT 1",
            (tenant_id, space_id, session_id),
        )
        return None if row is None else f"{row[0]}: {row[1]}"

    def clear_sessions(self, conn: Conn, tenant_id: str, space_id: str) -> int:
        cursor = conn.execute(
            "DELETE FROM session_messages WHERE tenant_id = %s AND space_id = %s",
            (tenant_id, space_id),
        )
        return int(cursor.rowcount)

    # ------------------------------------------------------------------ embedding cache
    def cached_vectors(self, model: str, hashes: Sequence[bytes]) -> dict[bytes, bytes]:
        rows = self.all(
            "SELECT hash, vector FROM embed_cache WHERE model = %s AND hash = ANY(%s)",
            (model, list(hashes)),
        )
        return {bytes(h): bytes(v) for h, v in rows}

    def cache_vectors(self, model: str, items: Sequence[tuple[bytes, bytes]]) -> None:
        if items:
            with self.write() as conn, conn.cursor() as cur:
                cur.executemany(
                    "INSERT INTO embed_cache(model, hash, vector) VALUES (%s, %s, %s) "
                    "ON CONFLICT DO NOTHING",
                    [(model, h, v) for h, v in items],
                )

    # ------------------------------------------------------------------ pending embeddings
    def queue_embeddings(self, conn: Conn, memories: Sequence[Memory]) -> None:
        now = to_us(utcnow())
        with conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO pending_embeddings(memory_id, space_id, queued_at) "
                "VALUES (%s, %s, %s) ON CONFLICT DO NOTHING",
                [(m.id, m.space_id, now) for m in memories],
            )

    def pending_embeddings(self, limit: int) -> list[Memory]:
        rows = self.all(
            f"SELECT {SELECT_COLUMNS} FROM pending_embeddings p "
            "JOIN memories m ON m.id = p.memory_id ORDER BY p.queued_at, p.seq LIMIT %s",
            (limit,),
        )
        return [row_to_memory(r) for r in rows]

    def count_pending_embeddings(self) -> int:
        row = self.one("SELECT COUNT(*) FROM pending_embeddings")
        return 0 if row is None else int(row[0])

    def drop_orphan_embeddings(self) -> int:
        with self.write() as conn:
            cursor = conn.execute(
                "DELETE FROM pending_embeddings p WHERE NOT EXISTS "
                "(SELECT 1 FROM memories m WHERE m.id = p.memory_id)"
            )
            return int(cursor.rowcount)

    def store_embeddings(self, memory_ids: Sequence[str], vectors: npt.NDArray[np.float32]) -> None:
        """Write the vectors and take the memories off the queue, in one transaction."""
        with self.write() as conn, conn.cursor() as cur:
            cur.executemany(
                "UPDATE memories SET vector = %s WHERE id = %s AND vector IS NULL",
                [
                    (np.asarray(v, dtype=np.float32), i)
                    for i, v in zip(memory_ids, vectors, strict=True)
                ],
            )
            cur.execute(
                "DELETE FROM pending_embeddings WHERE memory_id = ANY(%s)", (list(memory_ids),)
            )

    # ------------------------------------------------------------------ settings
    def get_tenant_setting(self, tenant_id: str, name: str) -> dict[str, Any] | None:
        row = self.one(
            "SELECT value FROM tenant_settings WHERE tenant_id = %s AND name = %s",
            (tenant_id, name),
        )
        if row is None:
            return None
        value: dict[str, Any] = json.loads(row[0])
        return value

    def put_tenant_setting(self, tenant_id: str, name: str, value: dict[str, Any]) -> None:
        with self.write() as conn:
            conn.execute(
                "INSERT INTO tenant_settings(tenant_id, name, value, updated_at) "
                "VALUES (%s, %s, %s::jsonb, %s) ON CONFLICT (tenant_id, name) DO UPDATE SET "
                "value = excluded.value, updated_at = excluded.updated_at",
                (tenant_id, name, json.dumps(value, ensure_ascii=False), to_us(utcnow())),
            )

    def put_memory_metadata(self, tenant_id: str, memory_id: str, value: dict[str, Any]) -> None:
        with self.write() as conn:
            conn.execute(
                "INSERT INTO memory_metadata(memory_id, tenant_id, value) VALUES (%s, %s, "
                "%s::jsonb) ON CONFLICT (memory_id) DO UPDATE SET value = excluded.value",
                (memory_id, tenant_id, json.dumps(value, ensure_ascii=False)),
            )

    def memory_metadata(self, tenant_id: str, memory_ids: Sequence[str]) -> dict[str, Any]:
        if not memory_ids:
            return {}
        rows = self.all(
            "SELECT memory_id, value FROM memory_metadata WHERE tenant_id = %s "
            "AND memory_id = ANY(%s)",
            (tenant_id, list(memory_ids)),
        )
        return {r[0]: json.loads(r[1]) for r in rows}

    # ------------------------------------------------------------------ aggregates
    def job_counts(self) -> list[tuple[str, str, int]]:
        return [(str(k), str(s), int(n)) for k, s, n in self.all(JOB_COUNTS)]

    def store_bytes(self) -> int:
        row = self.one("SELECT pg_database_size(current_database())")
        return 0 if row is None else int(row[0])

    def _scope(
        self,
        tenant_id: str,
        space_ids: Sequence[str],
        deleted: bool = False,
        viewer: Viewer | None = None,
    ) -> tuple[str, list[Any]]:
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
        if column not in GROUPABLE:
            raise ValueError(f"cannot group memories by {column!r}")
        where, params = self._scope(tenant_id, space_ids, deleted, viewer)
        rows = self.all(
            f"SELECT m.{column}, COUNT(*) FROM memories m WHERE {where} GROUP BY m.{column} "
            f"ORDER BY COUNT(*) DESC, m.{column}",
            params,
        )
        return {str(k): int(v) for k, v in rows}

    def breakdown(
        self, tenant_id: str, space_ids: Sequence[str], viewer: Viewer | None = None
    ) -> list[tuple[Any, ...]]:
        where, params = self._scope(tenant_id, space_ids, deleted=True, viewer=viewer)
        return [tuple(row) for row in self.all(breakdown_query(where), params)]

    def totals(
        self, tenant_id: str, space_ids: Sequence[str], viewer: Viewer | None = None
    ) -> dict[str, Any]:
        where, params = self._scope(tenant_id, space_ids, viewer=viewer)
        row = self.one(
            "SELECT COUNT(*), AVG(importance), AVG(confidence), SUM(access_count), "
            f"MAX(updated_at) FROM memories m WHERE {where}",
            params,
        )
        assert row is not None
        total, importance, confidence, accesses, last = row
        return {
            "total": int(total),
            "avg_importance": round(float(importance or 0.0), 4),
            "avg_confidence": round(float(confidence or 0.0), 4),
            "total_access_count": int(accesses or 0),
            "last_updated_us": None if last is None else int(last),
        }

    def daily_counts(
        self,
        tenant_id: str,
        space_ids: Sequence[str],
        since_us: int,
        by: str = "memory_type",
        viewer: Viewer | None = None,
    ) -> list[tuple[str, str, int]]:
        if by not in DAILY_GROUPS:
            raise ValueError(f"daily counts by {by!r}: one of {', '.join(DAILY_GROUPS)}")
        where, params = self._scope(tenant_id, space_ids, viewer=viewer)
        rows = self.all(
            "SELECT to_char(to_timestamp(m.created_at / 1000000) AT TIME ZONE 'UTC', "
            f"'YYYY-MM-DD') AS day, m.{by}, COUNT(*) FROM memories m WHERE {where} "
            f"AND m.created_at >= %s GROUP BY day, m.{by} ORDER BY day DESC, m.{by}",
            (*params, since_us),
        )
        return [(str(d), str(t), int(n)) for d, t, n in rows]

    def tag_counts(
        self, tenant_id: str, space_ids: Sequence[str], viewer: Viewer | None = None
    ) -> list[tuple[str, int, int]]:
        where, params = self._scope(tenant_id, space_ids, viewer=viewer)
        rows = self.all(
            "SELECT t.value, COUNT(*), COUNT(DISTINCT m.space_id) FROM memories m, "
            f"jsonb_array_elements_text(m.tags) AS t(value) WHERE {where} "
            "GROUP BY t.value ORDER BY COUNT(*) DESC, t.value",
            params,
        )
        return [(str(tag), int(n), int(spaces)) for tag, n, spaces in rows]

    def agent_counts(
        self, tenant_id: str, space_ids: Sequence[str], viewer: Viewer | None = None
    ) -> list[tuple[str, str, str, int, int, int]]:
        where, params = self._scope(tenant_id, space_ids, viewer=viewer)
        rows = self.all(
            "SELECT m.owner_agent_id, m.space_id, m.category, COUNT(*), MAX(m.updated_at), "
            f"COUNT(m.provenance) FROM memories m WHERE {where} "
            "GROUP BY m.owner_agent_id, m.space_id, m.category",
            params,
        )
        return [(str(a), str(s), str(c), int(n), int(t), int(sh)) for a, s, c, n, t, sh in rows]

    def shared_in(
        self, tenant_id: str, space_ids: Sequence[str], viewer: Viewer | None = None
    ) -> int:
        where, params = self._scope(tenant_id, space_ids, viewer=viewer)
        row = self.one(
            f"SELECT COUNT(*) FROM memories m WHERE {where} AND m.provenance IS NOT NULL", params
        )
        return 0 if row is None else int(row[0])
