"""Background tasks (smart ingest), persisted so they survive a crash and resume.

A task is ``queued`` when its messages are stored, ``running`` once a worker
claims it, then ``completed`` or ``failed``. Claiming is one write
transaction that skips any space with a task already running, so the
reconciliation of one space is serialised even across server processes. A
task left ``running`` by a worker that died is queued again on the next
start (``requeue_orphans``); after ``MAX_ATTEMPTS`` tries it is failed
rather than retried forever.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from memoryd.models import utcnow
from memoryd.store.database import Database
from memoryd.store.rows import blob_to_vector, from_us, to_us, vector_to_blob

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

MAX_ATTEMPTS = 3
DONE = ("completed", "failed")
# One task at a time a space, so two reconciliations never race; but a file import, which
# may run for minutes, only waits for and holds up another import: a user's turns are
# distilled, and consolidation runs, while it goes on (the running task ``r`` busies the
# queued ``t``'s space). The same SQL for both backends.
BUSY = (
    "r.status = 'running' AND r.space_id = t.space_id AND (r.kind = 'import') = (t.kind = 'import')"
)


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
        payload: dict[str, Any] | None = None,
    ) -> None:
        now = to_us(utcnow())
        done = now if status in DONE else None
        conn.execute(
            "INSERT INTO tasks(id, tenant_id, space_id, kind, status, payload, result, "
            "created_at, updated_at, completed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                task_id,
                tenant_id,
                space_id,
                kind,
                status,
                json.dumps(payload or {}, ensure_ascii=False),
                json.dumps(result, ensure_ascii=False),
                now,
                now,
                done,
            ),
        )

    def get_task(self, tenant_id: str, task_id: str) -> dict[str, Any] | None:
        row = self.conn.execute(
            "SELECT id, kind, status, result, errors, created_at, updated_at, completed_at, "
            "attempts FROM tasks WHERE id = ? AND tenant_id = ?",
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
            "attempts": row[8],
            "created_at": from_us(row[5]),
            "updated_at": from_us(row[6]),
            "completed_at": from_us(row[7]),
        }

    def session_task_ids(self, tenant_id: str, session_id: str) -> list[str]:
        """The ingest tasks of one conversation, oldest first."""
        rows = self.conn.execute(
            "SELECT id FROM tasks WHERE tenant_id = ? AND kind = 'ingest' "
            "AND json_extract(result, '$.session_id') = ? ORDER BY created_at, id",
            (tenant_id, session_id),
        ).fetchall()
        return [str(r[0]) for r in rows]

    def open_task(self, tenant_id: str, space_id: str, kind: str) -> str | None:
        """The id of a queued or running task of ``kind`` for the space, if there is one."""
        row = self.conn.execute(
            "SELECT id FROM tasks WHERE tenant_id = ? AND space_id = ? AND kind = ? "
            "AND status IN ('queued', 'running') ORDER BY created_at LIMIT 1",
            (tenant_id, space_id, kind),
        ).fetchone()
        return None if row is None else str(row[0])

    def claim_task(self, worker: str, kind: str) -> dict[str, Any] | None:
        """The oldest queued task of a space with nothing running that it waits for
        (:data:`BUSY`), now running for ``worker``."""
        # idle workers poll: a plain read first, the write lock only when there is work
        queued = self.conn.execute(
            "SELECT 1 FROM tasks WHERE status = 'queued' AND kind = ? LIMIT 1", (kind,)
        ).fetchone()
        if queued is None:
            return None
        with self.write() as conn:
            row = conn.execute(
                "SELECT id, tenant_id, space_id, payload, result, attempts FROM tasks t "
                f"WHERE status = 'queued' AND kind = ? AND NOT EXISTS (SELECT 1 FROM tasks r "
                f"WHERE {BUSY}) ORDER BY created_at, id LIMIT 1",
                (kind,),
            ).fetchone()
            if row is None:
                return None
            conn.execute(
                "UPDATE tasks SET status = 'running', claimed_by = ?, attempts = attempts + 1, "
                "updated_at = ? WHERE id = ?",
                (worker, to_us(utcnow()), row[0]),
            )
        return {
            "id": row[0],
            "tenant_id": row[1],
            "space_id": row[2],
            "payload": json.loads(row[3]),
            "result": json.loads(row[4]),
            "attempts": row[5] + 1,
        }

    def finish_task(
        self, task_id: str, claimant: str, status: str, result: dict[str, Any], errors: list[str]
    ) -> bool:
        """Record the end of ``claimant``'s run of a task; False if the task moved on meanwhile.

        A task can be queued again while its worker is finishing (an import
        re-run once the import says it is complete): that worker's late
        answer must not overwrite the new run's ``queued``, so the update
        applies only to the run ``claimant`` (process and thread) holds.
        """
        now = to_us(utcnow())
        with self.write() as conn:
            cursor = conn.execute(
                "UPDATE tasks SET status = ?, result = ?, errors = ?, updated_at = ?, "
                "completed_at = ?, claimed_by = NULL "
                "WHERE id = ? AND status = 'running' AND claimed_by = ?",
                (
                    status,
                    json.dumps(result, ensure_ascii=False),
                    json.dumps(errors, ensure_ascii=False),
                    now,
                    now if status in DONE else None,
                    task_id,
                    claimant,
                ),
            )
        return cursor.rowcount == 1

    def cancel_task(self, task_id: str, alive: Callable[[str], bool], reason: str) -> bool:
        """Fail a task nobody is running (queued, or held by a dead worker); False if one is."""
        with self.write() as conn:
            row = conn.execute(
                "SELECT status, claimed_by FROM tasks WHERE id = ?", (task_id,)
            ).fetchone()
            if row is None or row[0] in DONE:
                return True
            if row[0] == "running" and row[1] and alive(row[1]):
                return False
            now = to_us(utcnow())
            conn.execute(
                "UPDATE tasks SET status = 'failed', errors = ?, claimed_by = NULL, "
                "updated_at = ?, completed_at = ? WHERE id = ?",
                (json.dumps([reason]), now, now, task_id),
            )
        return True

    def release_task(self, task_id: str, claimant: str) -> bool:
        """Queue again a task its worker stopped on request; the attempt does not count."""
        with self.write() as conn:
            cursor = conn.execute(
                "UPDATE tasks SET status = 'queued', claimed_by = NULL, attempts = "
                "MAX(attempts - 1, 0), updated_at = ? WHERE id = ? AND status = 'running' "
                "AND claimed_by = ?",
                (to_us(utcnow()), task_id, claimant),
            )
        return cursor.rowcount == 1

    def requeue_task(self, task_id: str, payload_changes: dict[str, Any]) -> None:
        """Queue a finished task again, as new (the import's re-run)."""
        with self.write() as conn:
            row = conn.execute("SELECT payload FROM tasks WHERE id = ?", (task_id,)).fetchone()
            if row is None:
                return
            payload = {**json.loads(row[0]), **payload_changes}
            conn.execute(
                "UPDATE tasks SET status = 'queued', payload = ?, result = '{}', errors = '[]', "
                "attempts = 0, claimed_by = NULL, completed_at = NULL, updated_at = ? WHERE id = ?",
                (json.dumps(payload, ensure_ascii=False), to_us(utcnow()), task_id),
            )

    def requeue_orphans(self, alive: Callable[[str], bool], kind: str) -> tuple[int, list[str]]:
        """Queue again the running tasks whose worker is gone; fail those tried too often.

        Returns how many orphans there were and the ids of those given up.
        """
        with self.write() as conn:
            rows = conn.execute(
                "SELECT id, claimed_by, attempts FROM tasks WHERE status = 'running' AND kind = ?",
                (kind,),
            ).fetchall()
            orphans = [(i, a) for i, worker, a in rows if not worker or not alive(worker)]
            now = to_us(utcnow())
            given_up = []
            for task_id, attempts in orphans:
                if attempts >= MAX_ATTEMPTS:
                    given_up.append(task_id)
                    conn.execute(
                        "UPDATE tasks SET status = 'failed', errors = ?, updated_at = ?, "
                        "completed_at = ?, claimed_by = NULL WHERE id = ?",
                        (
                            json.dumps([f"gave up after {attempts} attempts"]),
                            now,
                            now,
                            task_id,
                        ),
                    )
                else:
                    conn.execute(
                        "UPDATE tasks SET status = 'queued', claimed_by = NULL, updated_at = ? "
                        "WHERE id = ?",
                        (now, task_id),
                    )
        return len(orphans), given_up

    # ------------------------------------------------------------------ learned noise
    def add_learned_noise(
        self,
        tenant_id: str,
        space_id: str,
        memory_id: str,
        content: str,
        vector: npt.NDArray[np.float32],
    ) -> None:
        with self.write() as conn:
            conn.execute(
                "INSERT OR IGNORE INTO learned_noise(tenant_id, space_id, memory_id, content, "
                "vector, at) VALUES (?, ?, ?, ?, ?, ?)",
                (tenant_id, space_id, memory_id, content, vector_to_blob(vector), to_us(utcnow())),
            )

    def learned_noise(self, space_id: str, limit: int) -> npt.NDArray[np.float32] | None:
        """The newest ``limit`` noise vectors of a space, oldest first; None when there are none."""
        rows = self.conn.execute(
            "SELECT vector FROM learned_noise WHERE space_id = ? ORDER BY id DESC LIMIT ?",
            (space_id, limit),
        ).fetchall()
        vectors = [v for v in (blob_to_vector(r[0]) for r in reversed(rows)) if v is not None]
        import numpy as np

        return np.stack(vectors) if vectors else None
