"""Rows of layered session memory: the raw transcript (D6) and its summaries (D5, D2, D1, D0).

Each write is one transaction and every write is idempotent (raw rows by
their key, summary layers by session and depth), so consolidation killed at
any point is simply run again: it finds what is there and does the rest.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from memoryd.models import new_id, utcnow
from memoryd.store.database import Database
from memoryd.store.rows import from_us, to_us

LAYER_COLUMNS = (
    "id, agent_id, session_id, project, depth, seq, key, role, content, basis, memory_id, "
    "created_at, updated_at, expires_at"
)


def _row(row: Any) -> dict[str, Any]:
    names = [c.strip() for c in LAYER_COLUMNS.split(",")]
    data = dict(zip(names, row, strict=True))
    for name in ("created_at", "updated_at", "expires_at"):
        data[name] = from_us(data[name])
    return data


class SessionLayerStore(Database):
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
            seq = conn.execute(
                "SELECT COALESCE(MAX(seq), 0) FROM session_layers WHERE tenant_id = ? AND "
                "agent_id = ? AND session_id = ? AND depth = 6",
                (tenant_id, agent_id, session_id),
            ).fetchone()[0]
            for key, role, content in messages:
                cursor = conn.execute(
                    "INSERT OR IGNORE INTO session_layers(id, tenant_id, agent_id, session_id, "
                    "project, depth, seq, key, role, content, created_at, updated_at, expires_at) "
                    "VALUES (?, ?, ?, ?, ?, 6, ?, ?, ?, ?, ?, ?, ?)",
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
            conn.execute(
                "INSERT INTO session_layers(id, tenant_id, agent_id, session_id, project, depth, "
                "key, content, basis, created_at, updated_at, expires_at) "
                "VALUES (?, ?, ?, ?, ?, ?, '', ?, ?, ?, ?, ?) "
                "ON CONFLICT(tenant_id, agent_id, session_id, depth, key) DO UPDATE SET "
                "content = excluded.content, basis = excluded.basis, "
                "updated_at = excluded.updated_at, expires_at = excluded.expires_at",
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
            )
        found = self.layer(tenant_id, agent_id, session_id, depth)
        assert found is not None
        return found

    def set_layer_memory(self, tenant_id: str, layer_id: str, memory_id: str) -> None:
        with self.write() as conn:
            conn.execute(
                "UPDATE session_layers SET memory_id = ? WHERE tenant_id = ? AND id = ?",
                (memory_id, tenant_id, layer_id),
            )

    def layer(
        self, tenant_id: str, agent_id: str, session_id: str, depth: int
    ) -> dict[str, Any] | None:
        row = self.conn.execute(
            f"SELECT {LAYER_COLUMNS} FROM session_layers WHERE tenant_id = ? AND agent_id = ? "
            "AND session_id = ? AND depth = ? AND key = ''",
            (tenant_id, agent_id, session_id, depth),
        ).fetchone()
        return None if row is None else _row(row)

    def raw_messages(self, tenant_id: str, agent_id: str, session_id: str) -> list[dict[str, Any]]:
        rows = self.conn.execute(
            f"SELECT {LAYER_COLUMNS} FROM session_layers WHERE tenant_id = ? AND agent_id = ? "
            "AND session_id = ? AND depth = 6 ORDER BY seq",
            (tenant_id, agent_id, session_id),
        ).fetchall()
        return [_row(r) for r in rows]

    def raw_window(
        self, tenant_id: str, agent_id: str, session_id: str, head: int, tail: int
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """The session's first ``head`` and last ``tail`` D6 rows, each in order."""
        query = (
            f"SELECT {LAYER_COLUMNS} FROM session_layers WHERE tenant_id = ? AND agent_id = ? "
            "AND session_id = ? AND depth = 6 ORDER BY seq {} LIMIT ?"
        )
        params = (tenant_id, agent_id, session_id)
        with self.read() as conn:
            first = conn.execute(query.format("ASC"), (*params, head)).fetchall()
            last = conn.execute(query.format("DESC"), (*params, tail)).fetchall()
        return [_row(r) for r in first], [_row(r) for r in reversed(last)]

    def session_layers(
        self, tenant_id: str, agent_id: str | None = None, session_id: str | None = None
    ) -> list[dict[str, Any]]:
        """Summary layers (not D6), newest session first, shallowest depth first."""
        where, params = ["tenant_id = ?", "depth != 6"], [tenant_id]
        for column, value in (("agent_id", agent_id), ("session_id", session_id)):
            if value is not None:
                where.append(f"{column} = ?")
                params.append(value)
        rows = self.conn.execute(
            f"SELECT {LAYER_COLUMNS} FROM session_layers WHERE {' AND '.join(where)} "
            "ORDER BY updated_at DESC, depth",
            params,
        ).fetchall()
        return [_row(r) for r in rows]

    def stale_sessions(
        self, tenant_id: str, idle_before_us: int | None = None
    ) -> list[tuple[str, str]]:
        """(agent, session) pairs with a kept layer (D2, D1, D0) missing, older than their D5,
        or still without its memory (a consolidation cut short)."""
        rows = self.conn.execute(
            "SELECT d5.agent_id, d5.session_id FROM session_layers d5 "
            "WHERE d5.tenant_id = ? AND d5.depth = 5 AND ("
            "SELECT COUNT(*) FROM session_layers k WHERE k.tenant_id = d5.tenant_id "
            "AND k.agent_id = d5.agent_id AND k.session_id = d5.session_id "
            "AND k.depth IN (0, 1, 2) AND k.basis >= d5.basis AND k.memory_id IS NOT NULL) < 3 "
            "AND d5.updated_at <= ? ORDER BY d5.updated_at",
            (tenant_id, idle_before_us if idle_before_us is not None else 2**62),
        ).fetchall()
        return [(str(r[0]), str(r[1])) for r in rows]

    def clear_continuity(self, conn: sqlite3.Connection, tenant_id: str) -> int:
        """Delete the tenant's checkpoints and session layers (delete-all); how many rows."""
        gone = 0
        for table in ("checkpoints", "session_layers"):
            cursor = conn.execute(f"DELETE FROM {table} WHERE tenant_id = ?", (tenant_id,))
            gone += int(cursor.rowcount)
        return gone

    def expire_layers(self, now_us: int) -> int:
        """Delete every row past its ``expires_at`` (all tenants); how many went."""
        with self.write() as conn:
            cursor = conn.execute(
                "DELETE FROM session_layers WHERE expires_at IS NOT NULL AND expires_at <= ?",
                (now_us,),
            )
        return cursor.rowcount
