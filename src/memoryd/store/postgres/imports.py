"""Import tasks and their journal on PostgreSQL (see ``store.imports`` for the design).

The journal is switched on per thread by ``store.imports.recording``, the same
context variable for both backends.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from memoryd.models import Memory, utcnow
from memoryd.store.imports import FINAL, IMPORT_COLUMNS, _recording
from memoryd.store.imports import _row as import_row
from memoryd.store.postgres.database import Conn, PgDatabase
from memoryd.store.rows import MEMORY_COLUMNS, memory_to_row, to_us


class PgImports(PgDatabase):
    def record_import(self, conn: Conn, record: dict[str, Any]) -> None:
        fixed = ("id", "tenant_id", "space_id", "filename", "file_type", "content_hash")
        detail = {k: v for k, v in record.items() if k not in (*fixed, "strategy", "status")}
        conn.execute(
            f"INSERT INTO import_tasks({IMPORT_COLUMNS}) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s::jsonb, %s, %s)",
            (
                *(record[k] for k in fixed),
                record["strategy"],
                record["status"],
                json.dumps(detail, ensure_ascii=False),
                to_us(utcnow()),
                None,
            ),
        )

    def get_import(self, tenant_id: str, import_id: str) -> dict[str, Any] | None:
        row = self.one(
            f"SELECT {IMPORT_COLUMNS} FROM import_tasks WHERE id = %s AND tenant_id = %s",
            (import_id, tenant_id),
        )
        return None if row is None else import_row(row)

    def list_imports(
        self, tenant_id: str, space_id: str, limit: int
    ) -> tuple[list[dict[str, Any]], int]:
        with self.read() as conn:
            rows = conn.execute(
                f"SELECT {IMPORT_COLUMNS} FROM import_tasks WHERE tenant_id = %s AND "
                "space_id = %s ORDER BY created_at DESC, id LIMIT %s",
                (tenant_id, space_id, limit),
            ).fetchall()
            total = conn.execute(
                "SELECT COUNT(*) FROM import_tasks WHERE tenant_id = %s AND space_id = %s",
                (tenant_id, space_id),
            ).fetchone()
        return [import_row(r) for r in rows], 0 if total is None else int(total[0])

    def import_with_hash(self, tenant_id: str, space_id: str, content_hash: str) -> str | None:
        row = self.one(
            "SELECT id FROM import_tasks WHERE tenant_id = %s AND space_id = %s AND "
            "content_hash = %s AND status IN ('processing', 'completed') LIMIT 1",
            (tenant_id, space_id, content_hash),
        )
        return None if row is None else str(row[0])

    def update_import(self, import_id: str, status: str | None = None, **detail: Any) -> None:
        with self.write() as conn:
            row = conn.execute(
                "SELECT status, detail FROM import_tasks WHERE id = %s FOR UPDATE", (import_id,)
            ).fetchone()
            if row is None:
                return
            merged = {**json.loads(row[1]), **detail}
            new_status = status or row[0]
            conn.execute(
                "UPDATE import_tasks SET status = %s, detail = %s::jsonb, completed_at = %s "
                "WHERE id = %s",
                (
                    new_status,
                    json.dumps(merged, ensure_ascii=False),
                    to_us(utcnow()) if new_status in FINAL else None,
                    import_id,
                ),
            )

    # ------------------------------------------------------------------ the journal
    def journal_created(self, conn: Conn, memories: Sequence[Memory]) -> None:
        import_id = _recording.get()
        if import_id is None:
            return
        with conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO import_changes(import_id, memory_id, action) "
                "VALUES (%s, %s, 'created') ON CONFLICT DO NOTHING",
                [(import_id, m.id) for m in memories],
            )

    def journal_before(self, conn: Conn, old: Memory) -> None:
        """The memory as it was before the import first touched it."""
        import_id = _recording.get()
        if import_id is None:
            return
        conn.execute(
            "INSERT INTO import_changes(import_id, memory_id, action, before, vector, "
            "history_cutoff) SELECT %s, m.id, 'changed', %s::jsonb, m.vector, "
            "(SELECT COALESCE(MAX(h.id), 0) FROM memory_history h WHERE h.memory_id = m.id) "
            "FROM memories m WHERE m.id = %s ON CONFLICT DO NOTHING",
            (import_id, old.model_dump_json(), old.id),
        )

    def journal_size(self, import_id: str) -> int:
        row = self.one("SELECT COUNT(*) FROM import_changes WHERE import_id = %s", (import_id,))
        return 0 if row is None else int(row[0])

    def rollback_import(self, import_id: str) -> tuple[int, int]:
        """Undo an import's journal in one transaction; (memories deleted, messages deleted)."""
        assignments = ", ".join(
            f"{c} = %s::jsonb" if c in ("tags", "marks", "relations", "provenance") else f"{c} = %s"
            for c in MEMORY_COLUMNS
        )
        with self.write() as conn:
            rows = conn.execute(
                "SELECT memory_id, action, before, vector, history_cutoff FROM import_changes "
                "WHERE import_id = %s ORDER BY id DESC",
                (import_id,),
            ).fetchall()
            for memory_id, action, before, vector, cutoff in rows:
                if action != "changed":
                    continue
                memory = Memory.model_validate_json(before)
                conn.execute(
                    f"UPDATE memories SET {assignments}, vector = %s WHERE id = %s",
                    (*memory_to_row(memory), vector, memory_id),
                )
                conn.execute(
                    "DELETE FROM memory_history WHERE memory_id = %s AND id > %s",
                    (memory_id, cutoff),
                )
            created = [r[0] for r in rows if r[1] == "created"]
            for table in ("memory_history", "learned_noise", "sharing_events"):
                conn.execute(f"DELETE FROM {table} WHERE memory_id = ANY(%s)", (created,))
            sessions = conn.execute(
                "DELETE FROM session_messages WHERE memory_id = ANY(%s)", (created,)
            ).rowcount
            gone = conn.execute("DELETE FROM memories WHERE id = ANY(%s)", (created,)).rowcount
            conn.execute(  # the capture records of the import's conversations
                "DELETE FROM tasks WHERE kind = 'ingest' AND result ->> 'session_id' LIKE %s",
                (f"import-{import_id}-%",),
            )
            conn.execute("DELETE FROM import_changes WHERE import_id = %s", (import_id,))
        return gone, sessions
