"""Checkpoint rows: one per agent session, replaced whole by every save.

A save is one ``BEGIN IMMEDIATE`` transaction (an upsert), so a process
killed in the middle of it leaves the session's previous checkpoint exactly
as it was: SQLite's write-ahead log never shows half a transaction. The
documents are stored as JSON text; the continuity package owns their shape.
"""

from __future__ import annotations

from typing import Any

from memoryd.models import new_id, utcnow
from memoryd.store.database import Database
from memoryd.store.rows import from_us, to_us

CHECKPOINT_COLUMNS = (
    "id, agent_id, session_id, project, trigger, saves, mechanical, summary, created_at, updated_at"
)


def _row(row: Any) -> dict[str, Any]:
    return {
        "id": row[0],
        "agent_id": row[1],
        "session_id": row[2],
        "project": row[3],
        "trigger": row[4],
        "saves": row[5],
        "mechanical": row[6],
        "summary": row[7],
        "created_at": from_us(row[8]),
        "updated_at": from_us(row[9]),
    }


class CheckpointStore(Database):
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
        """Replace the session's checkpoint (or make its first one); returns the row.

        ``summary`` None keeps the summary already saved: a mechanical save
        after a tool call must not erase the LLM's summary of a moment ago.
        """
        now = to_us(utcnow())
        with self.write() as conn:
            conn.execute(
                "INSERT INTO checkpoints(id, tenant_id, agent_id, session_id, project, trigger, "
                "saves, mechanical, summary, created_at, updated_at) "
                "VALUES (?, ?, ?, ?, ?, ?, 1, ?, ?, ?, ?) "
                "ON CONFLICT(tenant_id, agent_id, session_id) DO UPDATE SET "
                "project = excluded.project, trigger = excluded.trigger, saves = saves + 1, "
                "mechanical = excluded.mechanical, "
                "summary = COALESCE(excluded.summary, summary), updated_at = excluded.updated_at",
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
            )
            row = conn.execute(
                f"SELECT {CHECKPOINT_COLUMNS} FROM checkpoints "
                "WHERE tenant_id = ? AND agent_id = ? AND session_id = ?",
                (tenant_id, agent_id, session_id),
            ).fetchone()
        return _row(row)

    def set_checkpoint_summary(
        self, tenant_id: str, checkpoint_id: str, summary: str, basis: int
    ) -> bool:
        """Attach the summary of save number ``basis``; False when the checkpoint is gone or
        already has the summary of a later save (two summaries finishing out of order)."""
        with self.write() as conn:
            cursor = conn.execute(
                "UPDATE checkpoints SET summary = ? WHERE tenant_id = ? AND id = ? AND ("
                "summary IS NULL OR COALESCE(json_extract(summary, '$.basis'), 0) <= ?)",
                (summary, tenant_id, checkpoint_id, basis),
            )
        return cursor.rowcount > 0

    def get_checkpoint(self, tenant_id: str, checkpoint_id: str) -> dict[str, Any] | None:
        row = self.conn.execute(
            f"SELECT {CHECKPOINT_COLUMNS} FROM checkpoints WHERE tenant_id = ? AND id = ?",
            (tenant_id, checkpoint_id),
        ).fetchone()
        return None if row is None else _row(row)

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
        """Newest first, narrowed by whichever of agent, session and project are given."""
        where, params = ["tenant_id = ?"], [tenant_id]
        for column, value in (("agent_id", agent_id), ("session_id", session_id)):
            if value is not None:
                where.append(f"{column} = ?")
                params.append(value)
        if project is not None:
            where.append("project = ?")
            params.append(project)
        rows = self.conn.execute(
            f"SELECT {CHECKPOINT_COLUMNS} FROM checkpoints WHERE {' AND '.join(where)} "
            "ORDER BY updated_at DESC, id LIMIT ? OFFSET ?",
            (*params, limit, offset),
        ).fetchall()
        return [_row(r) for r in rows]

    def delete_checkpoint(self, tenant_id: str, checkpoint_id: str) -> bool:
        with self.write() as conn:
            cursor = conn.execute(
                "DELETE FROM checkpoints WHERE tenant_id = ? AND id = ?", (tenant_id, checkpoint_id)
            )
        return cursor.rowcount > 0
