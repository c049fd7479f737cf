"""Import tasks and their journal, so that rollback removes exactly what an import did.

The journal is switched on per thread with :func:`recording`: while an
import runs, the memory writes of that thread (creates, updates, state
changes, wherever they come from: the import itself, the reconciler,
auto-share) also write a journal row in the same transaction. A crash
therefore never leaves a write without its journal entry.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from memoryd.models import Memory, utcnow
from memoryd.store.database import Database
from memoryd.store.rows import MEMORY_COLUMNS, from_us, memory_to_row, to_us

_recording: ContextVar[str | None] = ContextVar("memoryd_import_journal", default=None)
IMPORT_COLUMNS = (
    "id, tenant_id, space_id, filename, file_type, content_hash, strategy, status, detail, "
    "created_at, completed_at"
)
FINAL = ("completed", "failed", "rolled_back")


@contextmanager
def recording(import_id: str) -> Iterator[None]:
    """Journal this thread's memory writes under ``import_id`` until the block ends."""
    token = _recording.set(import_id)
    try:
        yield
    finally:
        _recording.reset(token)


def _row(row: Sequence[Any]) -> dict[str, Any]:
    return {
        "id": row[0],
        "tenant_id": row[1],
        "space_id": row[2],
        "filename": row[3],
        "file_type": row[4],
        "content_hash": row[5],
        "strategy": row[6],
        "status": row[7],
        **json.loads(row[8]),
        "created_at": from_us(row[9]),
        "completed_at": from_us(row[10]),
    }


class ImportStore(Database):
    # ------------------------------------------------------------------ import tasks
    def record_import(self, conn: sqlite3.Connection, record: dict[str, Any]) -> None:
        fixed = ("id", "tenant_id", "space_id", "filename", "file_type", "content_hash")
        detail = {k: v for k, v in record.items() if k not in (*fixed, "strategy", "status")}
        conn.execute(
            f"INSERT INTO import_tasks({IMPORT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
        row = self.conn.execute(
            f"SELECT {IMPORT_COLUMNS} FROM import_tasks WHERE id = ? AND tenant_id = ?",
            (import_id, tenant_id),
        ).fetchone()
        return None if row is None else _row(row)

    def list_imports(
        self, tenant_id: str, space_id: str, limit: int
    ) -> tuple[list[dict[str, Any]], int]:
        rows = self.conn.execute(
            f"SELECT {IMPORT_COLUMNS} FROM import_tasks WHERE tenant_id = ? AND space_id = ? "
            "ORDER BY created_at DESC, id LIMIT ?",
            (tenant_id, space_id, limit),
        ).fetchall()
        total = self.conn.execute(
            "SELECT COUNT(*) FROM import_tasks WHERE tenant_id = ? AND space_id = ?",
            (tenant_id, space_id),
        ).fetchone()[0]
        return [_row(r) for r in rows], int(total)

    def import_with_hash(self, tenant_id: str, space_id: str, content_hash: str) -> str | None:
        """A live import of the same content (rolled back or failed ones do not count)."""
        row = self.conn.execute(
            "SELECT id FROM import_tasks WHERE tenant_id = ? AND space_id = ? AND "
            "content_hash = ? AND status IN ('processing', 'completed') LIMIT 1",
            (tenant_id, space_id, content_hash),
        ).fetchone()
        return None if row is None else str(row[0])

    def update_import(self, import_id: str, status: str | None = None, **detail: Any) -> None:
        """Merge ``detail`` into the task's counters; a final ``status`` stamps completion."""
        with self.write() as conn:
            row = conn.execute(
                "SELECT status, detail FROM import_tasks WHERE id = ?", (import_id,)
            ).fetchone()
            if row is None:
                return
            merged = {**json.loads(row[1]), **detail}
            new_status = status or row[0]
            conn.execute(
                "UPDATE import_tasks SET status = ?, detail = ?, completed_at = ? WHERE id = ?",
                (
                    new_status,
                    json.dumps(merged, ensure_ascii=False),
                    to_us(utcnow()) if new_status in FINAL else None,
                    import_id,
                ),
            )

    # ------------------------------------------------------------------ the journal
    def journal_created(self, conn: sqlite3.Connection, memories: Sequence[Memory]) -> None:
        import_id = _recording.get()
        if import_id is None:
            return
        conn.executemany(
            "INSERT OR IGNORE INTO import_changes(import_id, memory_id, action) "
            "VALUES (?, ?, 'created')",
            [(import_id, m.id) for m in memories],
        )

    def journal_before(self, conn: sqlite3.Connection, old: Memory) -> None:
        """The memory as it was before the import first touched it (later changes keep this)."""
        import_id = _recording.get()
        if import_id is None:
            return
        conn.execute(
            "INSERT OR IGNORE INTO import_changes(import_id, memory_id, action, before, vector, "
            "history_cutoff) SELECT ?, m.id, 'changed', ?, m.vector, (SELECT COALESCE(MAX(h.id), "
            "0) FROM memory_history h WHERE h.memory_id = m.id) FROM memories m WHERE m.id = ?",
            (import_id, old.model_dump_json(), old.id),
        )

    def journal_size(self, import_id: str) -> int:
        row = self.conn.execute(
            "SELECT COUNT(*) FROM import_changes WHERE import_id = ?", (import_id,)
        ).fetchone()
        return int(row[0])

    def rollback_import(self, import_id: str) -> tuple[int, int]:
        """Restore what the import changed, delete what it created, in one transaction;
        (memories deleted, session messages deleted).

        The vector index of any process drops the deleted rows when it next
        catches up: each leaves its rowid in ``deleted_memories`` (a trigger).
        """
        with self.write() as conn:
            rows = conn.execute(
                "SELECT memory_id, action, before, vector, history_cutoff FROM import_changes "
                "WHERE import_id = ? ORDER BY id DESC",
                (import_id,),
            ).fetchall()
            seq = self._bump_seq(conn)
            assignments = ", ".join(f"{c} = ?" for c in MEMORY_COLUMNS)
            created = [r[0] for r in rows if r[1] == "created"]
            for memory_id, action, before, vector, cutoff in rows:
                if action != "changed":
                    continue
                memory = Memory.model_validate_json(before)
                conn.execute(
                    f"UPDATE memories SET {assignments}, vector = ?, seq = ? WHERE id = ?",
                    (*memory_to_row(memory), vector, seq, memory_id),
                )
                conn.execute(
                    "DELETE FROM memory_history WHERE memory_id = ? AND id > ?", (memory_id, cutoff)
                )
            memories = sessions = 0
            for memory_id in created:
                for table in ("memory_history", "learned_noise", "sharing_events"):
                    conn.execute(f"DELETE FROM {table} WHERE memory_id = ?", (memory_id,))
                sessions += conn.execute(
                    "DELETE FROM session_messages WHERE memory_id = ?", (memory_id,)
                ).rowcount
                memories += conn.execute("DELETE FROM memories WHERE id = ?", (memory_id,)).rowcount
            conn.execute(  # the capture records of the import's conversations
                "DELETE FROM tasks WHERE kind = 'ingest' AND json_extract(result, '$.session_id') "
                "LIKE ?",
                (f"import-{import_id}-%",),
            )
            conn.execute("DELETE FROM import_changes WHERE import_id = ?", (import_id,))
        return memories, sessions
