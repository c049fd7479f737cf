"""Checkpoints and layered session memory on PostgreSQL (see ``store.checkpoints`` and
``store.session_layers``: each write one transaction, each idempotent)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memoryd.models import new_id, utcnow
from memoryd.store.checkpoints import CHECKPOINT_COLUMNS
from memoryd.store.checkpoints import _row as checkpoint_row
from memoryd.store.postgres.database import Conn, PgDatabase
from memoryd.store.rows import to_us
from memoryd.store.session_layers import LAYER_COLUMNS
from memoryd.store.session_layers import _row as layer_row


class PgContinuity(PgDatabase):
    # ------------------------------------------------------------------ checkpoints
    def save_checkpoint(
        self,
        tenant_id: str,
        agent_id: str,
        session_id: str,
        project: str,
        trigger: str,
        mechanical: str,
        summary: str | None,
    ) -> dict[str, Any]:
        """Replace the session's checkpoint (or make its first one); returns the row."""
        now = to_us(utcnow())
        with self.write() as conn:
            row = conn.execute(
                "INSERT INTO checkpoints AS c(id, tenant_id, agent_id, session_id, project, "
                "trigger, saves, mechanical, summary, created_at, updated_at) "
                "VALUES (%s, %s, %s, %s, %s, %s, 1, %s, %s, %s, %s) "
                "ON CONFLICT (tenant_id, agent_id, session_id) DO UPDATE SET "
                "project = excluded.project, trigger = excluded.trigger, saves = c.saves + 1, "
                "mechanical = excluded.mechanical, "
                "summary = COALESCE(excluded.summary, c.summary), "
                f"updated_at = excluded.updated_at RETURNING {CHECKPOINT_COLUMNS}",
                (
                    new_id(),
                    tenant_id,
                    agent_id,
                    session_id,
                    project,
                    trigger,
                    mechanical,
                    summary,
                    now,
                    now,
                ),
            ).fetchone()
        return checkpoint_row(row)

    def set_checkpoint_summary(
        self, tenant_id: str, checkpoint_id: str, summary: str, basis: int
    ) -> bool:
        """Attach the summary of save number ``basis``, unless a later save's is there."""
        with self.write() as conn:
            cursor = conn.execute(
                "UPDATE checkpoints SET summary = %s WHERE tenant_id = %s AND id = %s AND ("
                "summary IS NULL OR COALESCE((summary::jsonb ->> 'basis')::bigint, 0) <= %s)",
                (summary, tenant_id, checkpoint_id, basis),
            )
        return cursor.rowcount > 0

    def get_checkpoint(self, tenant_id: str, checkpoint_id: str) -> dict[str, Any] | None:
        row = self.one(
            f"SELECT {CHECKPOINT_COLUMNS} FROM checkpoints WHERE tenant_id = %s AND id = %s",
            (tenant_id, checkpoint_id),
        )
        return None if row is None else checkpoint_row(row)

    def list_checkpoints(
        self,
        tenant_id: str,
        *,
        agent_id: str | None = None,
        session_id: str | None = None,
        project: str | None = None,
        limit: int = 20,
        offset: int = 0,
    ) -> list[dict[str, Any]]:
        where, params = ["tenant_id = %s"], [tenant_id]
        for column, value in (
            ("agent_id", agent_id),
            ("session_id", session_id),
            ("project", project),
        ):
            if value is not None:
                where.append(f"{column} = %s")
                params.append(value)
        rows = self.all(
            f"SELECT {CHECKPOINT_COLUMNS} FROM checkpoints WHERE {' AND '.join(where)} "
            "ORDER BY updated_at DESC, id LIMIT %s OFFSET %s",
            (*params, limit, offset),
        )
        return [checkpoint_row(r) for r in rows]

    def delete_checkpoint(self, tenant_id: str, checkpoint_id: str) -> bool:
        with self.write() as conn:
            cursor = conn.execute(
                "DELETE FROM checkpoints WHERE tenant_id = %s AND id = %s",
                (tenant_id, checkpoint_id),
            )
        return cursor.rowcount > 0

    # ------------------------------------------------------------------ session layers
    def append_raw(
        self,
        tenant_id: str,
        agent_id: str,
        session_id: str,
        project: str,
        messages: Sequence[tuple[str, str, str]],
        expires_us: int | None,
    ) -> int:
        """Add D6 rows ``(key, role, content)`` not stored yet, in order; how many were new."""
        now = to_us(utcnow())
        added = 0
        with self.write() as conn:
            conn.execute(  # appends to one session are serialised, across servers too
                "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
                (f"memoryd-layers:{tenant_id}:{agent_id}:{session_id}",),
            )
            found = conn.execute(
                "SELECT COALESCE(MAX(seq), 0) FROM session_layers WHERE tenant_id = %s AND "
                "agent_id = %s AND session_id = %s AND depth = 6",
                (tenant_id, agent_id, session_id),
            ).fetchone()
            seq = int(found[0]) if found else 0
            for key, role, content in messages:
                cursor = conn.execute(
                    "INSERT INTO session_layers(id, tenant_id, agent_id, session_id, project, "
                    "depth, seq, key, role, content, created_at, updated_at, expires_at) "
                    "VALUES (%s, %s, %s, %s, %s, 6, %s, %s, %s, %s, %s, %s, %s) "
                    "ON CONFLICT DO NOTHING",
                    (
                        new_id(),
                        tenant_id,
                        agent_id,
                        session_id,
                        project,
                        seq + 1,
                        key,
                        role,
                        content,
                        now,
                        now,
                        expires_us,
                    ),
                )
                if cursor.rowcount:
                    seq += 1
                    added += 1
        return added

    def put_layer(
        self,
        tenant_id: str,
        agent_id: str,
        session_id: str,
        project: str,
        depth: int,
        content: str,
        basis: int,
        expires_us: int | None,
    ) -> dict[str, Any]:
        """Write the session's summary layer ``depth`` (replacing it); returns the row."""
        now = to_us(utcnow())
        with self.write() as conn:
            row = conn.execute(
                "INSERT INTO session_layers(id, tenant_id, agent_id, session_id, project, depth, "
                "key, content, basis, created_at, updated_at, expires_at) "
                "VALUES (%s, %s, %s, %s, %s, %s, '', %s, %s, %s, %s, %s) "
                "ON CONFLICT (tenant_id, agent_id, session_id, depth, key) DO UPDATE SET "
                "content = excluded.content, basis = excluded.basis, "
                "updated_at = excluded.updated_at, expires_at = excluded.expires_at "
                f"RETURNING {LAYER_COLUMNS}",
                (
                    new_id(),
                    tenant_id,
                    agent_id,
                    session_id,
                    project,
                    depth,
                    content,
                    basis,
                    now,
                    now,
                    expires_us,
                ),
            ).fetchone()
        return layer_row(row)

    def set_layer_memory(self, tenant_id: str, layer_id: str, memory_id: str) -> None:
        with self.write() as conn:
            conn.execute(
                "UPDATE session_layers SET memory_id = %s WHERE tenant_id = %s AND id = %s",
                (memory_id, tenant_id, layer_id),
            )

    def layer(
        self, tenant_id: str, agent_id: str, session_id: str, depth: int
    ) -> dict[str, Any] | None:
        row = self.one(
            f"SELECT {LAYER_COLUMNS} FROM session_layers WHERE tenant_id = %s AND agent_id = %s "
            "AND session_id = %s AND depth = %s AND key = ''",
            (tenant_id, agent_id, session_id, depth),
        )
        return None if row is None else layer_row(row)

    def raw_window(
        self, tenant_id: str, agent_id: str, session_id: str, head: int, tail: int
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        query = (
            f"SELECT {LAYER_COLUMNS} FROM session_layers WHERE tenant_id = %s AND agent_id = %s "
            "AND session_id = %s AND depth = 6 ORDER BY seq {} LIMIT %s"
        )
        params = (tenant_id, agent_id, session_id)
        with self.read() as conn:
            first = conn.execute(query.format("ASC"), (*params, head)).fetchall()
            last = conn.execute(query.format("DESC"), (*params, tail)).fetchall()
        return [layer_row(r) for r in first], [layer_row(r) for r in reversed(last)]

    def session_layers(
        self, tenant_id: str, agent_id: str | None = None, session_id: str | None = None
    ) -> list[dict[str, Any]]:
        where, params = ["tenant_id = %s", "depth != 6"], [tenant_id]
        for column, value in (("agent_id", agent_id), ("session_id", session_id)):
            if value is not None:
                where.append(f"{column} = %s")
                params.append(value)
        rows = self.all(
            f"SELECT {LAYER_COLUMNS} FROM session_layers WHERE {' AND '.join(where)} "
            "ORDER BY updated_at DESC, depth",
            params,
        )
        return [layer_row(r) for r in rows]

    def stale_sessions(
        self, tenant_id: str, idle_before_us: int | None = None
    ) -> list[tuple[str, str]]:
        rows = self.all(
            "SELECT d5.agent_id, d5.session_id FROM session_layers d5 "
            "WHERE d5.tenant_id = %s AND d5.depth = 5 AND ("
            "SELECT COUNT(*) FROM session_layers k WHERE k.tenant_id = d5.tenant_id "
            "AND k.agent_id = d5.agent_id AND k.session_id = d5.session_id "
            "AND k.depth IN (0, 1, 2) AND k.basis >= d5.basis AND k.memory_id IS NOT NULL) < 3 "
            "AND d5.updated_at <= %s ORDER BY d5.updated_at",
            (tenant_id, idle_before_us if idle_before_us is not None else 2**62),
        )
        return [(str(r[0]), str(r[1])) for r in rows]

    def clear_continuity(self, conn: Conn, tenant_id: str) -> int:
        gone = 0
        for table in ("checkpoints", "session_layers"):
            cursor = conn.execute(f"DELETE FROM {table} WHERE tenant_id = %s", (tenant_id,))
            gone += int(cursor.rowcount)
        return gone

    def expire_layers(self, now_us: int) -> int:
        with self.write() as conn:
            cursor = conn.execute(
                "DELETE FROM session_layers WHERE expires_at IS NOT NULL AND expires_at <= %s",
                (now_us,),
            )
        return cursor.rowcount
