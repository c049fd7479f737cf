"""Background tasks (conversation ingest), persisted so their status survives restarts."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from memoryd.models import utcnow
from memoryd.store.database import Database
from memoryd.store.rows import from_us, to_us


class TaskStore(Database):
    def record_task(
        self,
        conn: sqlite3.Connection,
        task_id: str,
        tenant_id: str,
        space_id: str,
        kind: str,
        status: str,
        result: dict[str, Any],
    ) -> None:
        now = to_us(utcnow())
        done = now if status in ("completed", "failed") else None
        conn.execute(
            "INSERT INTO tasks(id, tenant_id, space_id, kind, status, result, created_at, "
            "updated_at, completed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (task_id, tenant_id, space_id, kind, status, json.dumps(result), now, now, done),
        )

    def get_task(self, tenant_id: str, task_id: str) -> dict[str, Any] | None:
        row = self.conn.execute(
            "SELECT id, kind, status, result, errors, created_at, updated_at, completed_at "
            "FROM tasks WHERE id = ? AND tenant_id = ?",
            (task_id, tenant_id),
        ).fetchone()
        if row is None:
            return None
        return {
            "id": row[0],
            "kind": row[1],
            "status": row[2],
            **json.loads(row[3]),
            "errors": json.loads(row[4]),
            "created_at": from_us(row[5]),
            "updated_at": from_us(row[6]),
            "completed_at": from_us(row[7]),
        }
