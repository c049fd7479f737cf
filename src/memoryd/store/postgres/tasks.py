"""Background tasks on PostgreSQL: claimed with ``FOR UPDATE SKIP LOCKED``.

Many servers poll one table. A claim locks candidate rows that no other
claim holds (``SKIP LOCKED``), then takes a transaction-scoped advisory lock
on the task's space and checks again that nothing of that space is running:
the lock is held until the claim commits, so two servers never run two tasks
of one space at once (reconciliation of a space stays serialised).

A claimed task is leased: a connection of the claiming process holds a
session advisory lock on the task until its run ends. PostgreSQL drops the
lock with the connection, so a server that dies (killed, or its host gone)
frees its tasks at once, and any server sees that: a running task whose lease
nobody holds is an orphan, queued again by the next claim that looks (every
``ORPHAN_CHECK_S``) or by a worker starting. Process ids cannot tell that
across hosts; the lease can.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

from memoryd.models import utcnow
from memoryd.store.postgres.database import Conn, PgDatabase
from memoryd.store.rows import from_us, to_us
from memoryd.store.tasks import BUSY, DONE, MAX_ATTEMPTS

# queued tasks one claim looks at (each of another space, or locked by another claim)
CLAIM_WINDOW = 16
SPACE_LOCK = "SELECT pg_try_advisory_xact_lock(hashtextextended('memoryd-space:' || %s, 0))"
LEASE_KEY = "hashtextextended('memoryd-task:' || %s, 0)"
# how often a claim that finds nothing looks for tasks whose lease was dropped
ORPHAN_CHECK_S = 2.0


class PgTasks(PgDatabase):
    _leases: dict[tuple[str, str], Conn]
    _leases_lock: threading.Lock
    _orphans_checked: dict[str, float]

    def _lease_table(self) -> tuple[dict[tuple[str, str], Conn], threading.Lock]:
        if not hasattr(self, "_leases"):
            self._leases, self._leases_lock = {}, threading.Lock()
        return self._leases, self._leases_lock

    def _take_lease(self, task_id: str, claimant: str) -> bool:
        """Hold the task's lease on a connection of its own until the run ends; False when
        another run still holds it (queued again while that run finishes)."""
        conn = self._connect()
        try:
            row = conn.execute(f"SELECT pg_try_advisory_lock({LEASE_KEY})", (task_id,)).fetchone()
        except BaseException:
            conn.close()
            raise
        if not (row and row[0]):
            conn.close()
            return False
        leases, lock = self._lease_table()
        with lock:
            leases[(task_id, claimant)] = conn
        return True

    def _drop_lease(self, task_id: str, claimant: str) -> None:
        leases, lock = self._lease_table()
        with lock:
            conn = leases.pop((task_id, claimant), None)
        if conn is not None:
            conn.close()  # the session lock goes with it

    def close(self) -> None:
        """Runs still in hand lose their leases (other servers may take them over)."""
        leases, lock = self._lease_table()
        with lock:
            held = list(leases.values())
            leases.clear()
        for conn in held:
            conn.close()
        super().close()

    def _unleased(self, conn: Conn, task_id: str) -> bool:
        """Nobody holds the task's lease (this transaction holds it from now on)."""
        row = conn.execute(f"SELECT pg_try_advisory_xact_lock({LEASE_KEY})", (task_id,)).fetchone()
        return bool(row and row[0])

    def record_task(
        self,
        conn: Conn,
        task_id: str,
        tenant_id: str,
        space_id: str,
        kind: str,
        status: str,
        result: dict[str, Any],
        payload: dict[str, Any] | None = None,
    ) -> None:
        now = to_us(utcnow())
        conn.execute(
            "INSERT INTO tasks(id, tenant_id, space_id, kind, status, payload, result, "
            "created_at, updated_at, completed_at) "
            "VALUES (%s, %s, %s, %s, %s, %s::jsonb, %s::jsonb, %s, %s, %s)",
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
                now if status in DONE else None,
            ),
        )

    def get_task(self, tenant_id: str, task_id: str) -> dict[str, Any] | None:
        row = self.one(
            "SELECT id, kind, status, result, errors, created_at, updated_at, completed_at, "
            "attempts FROM tasks WHERE id = %s AND tenant_id = %s",
            (task_id, tenant_id),
        )
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
        rows = self.all(
            "SELECT id FROM tasks WHERE tenant_id = %s AND kind = 'ingest' "
            "AND result ->> 'session_id' = %s ORDER BY created_at, id",
            (tenant_id, session_id),
        )
        return [str(r[0]) for r in rows]

    def open_task(self, tenant_id: str, space_id: str, kind: str) -> str | None:
        row = self.one(
            "SELECT id FROM tasks WHERE tenant_id = %s AND space_id = %s AND kind = %s "
            "AND status IN ('queued', 'running') ORDER BY created_at LIMIT 1",
            (tenant_id, space_id, kind),
        )
        return None if row is None else str(row[0])

    def claim_task(self, worker: str, kind: str) -> dict[str, Any] | None:
        """The oldest queued task of a space with nothing running that it waits for
        (:data:`memoryd.store.tasks.BUSY`), now running for ``worker``."""
        # per kind: the workers of every kind claim through this store, and a check of
        # one kind's orphans must not stand in for another's
        checked = self.__dict__.setdefault("_orphans_checked", {})
        if time.monotonic() - checked.get(kind, 0.0) > ORPHAN_CHECK_S:
            checked[kind] = time.monotonic()
            self._requeue_unleased(kind)
        if (
            self.one("SELECT 1 FROM tasks WHERE status = 'queued' AND kind = %s LIMIT 1", (kind,))
            is None
        ):
            return None
        with self.write() as conn:
            candidates = conn.execute(
                "SELECT id, space_id FROM tasks t WHERE status = 'queued' AND kind = %s "
                f"AND NOT EXISTS (SELECT 1 FROM tasks r WHERE {BUSY}) "
                "ORDER BY created_at, id LIMIT %s FOR UPDATE SKIP LOCKED",
                (kind, CLAIM_WINDOW),
            ).fetchall()
            for task_id, space_id in candidates:
                locked = conn.execute(SPACE_LOCK, (space_id,)).fetchone()
                if not (locked and locked[0]):
                    continue  # another server is claiming in this space right now
                busy = conn.execute(  # a fresh snapshot: sees claims committed meanwhile
                    f"SELECT 1 FROM tasks r, tasks t WHERE t.id = %s AND {BUSY} LIMIT 1",
                    (task_id,),
                ).fetchone()
                if busy is not None:
                    continue
                # leased before the claim commits: a task is never seen running unleased
                if not self._take_lease(task_id, worker):
                    continue
                try:
                    row = conn.execute(
                        "UPDATE tasks SET status = 'running', claimed_by = %s, "
                        "attempts = attempts + 1, updated_at = %s WHERE id = %s "
                        "RETURNING id, tenant_id, space_id, payload, result, attempts",
                        (worker, to_us(utcnow()), task_id),
                    ).fetchone()
                except BaseException:
                    self._drop_lease(task_id, worker)
                    raise
                assert row is not None
                return {
                    "id": row[0],
                    "tenant_id": row[1],
                    "space_id": row[2],
                    "payload": json.loads(row[3]),
                    "result": json.loads(row[4]),
                    "attempts": row[5],
                }
        return None

    def finish_task(
        self, task_id: str, claimant: str, status: str, result: dict[str, Any], errors: list[str]
    ) -> bool:
        """Record the end of ``claimant``'s run; False if the task moved on meanwhile."""
        now = to_us(utcnow())
        with self.write() as conn:
            cursor = conn.execute(
                "UPDATE tasks SET status = %s, result = %s::jsonb, errors = %s::jsonb, "
                "updated_at = %s, completed_at = %s, claimed_by = NULL "
                "WHERE id = %s AND status = 'running' AND claimed_by = %s",
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
        self._drop_lease(task_id, claimant)  # this run is over, whatever the row says now
        return cursor.rowcount == 1

    def cancel_task(self, task_id: str, alive: Callable[[str], bool], reason: str) -> bool:
        """Fail a task nobody is running; False if one is."""
        with self.write() as conn:
            row = conn.execute(
                "SELECT status, claimed_by FROM tasks WHERE id = %s FOR UPDATE", (task_id,)
            ).fetchone()
            if row is None or row[0] in DONE:
                return True
            if row[0] == "running" and not self._unleased(conn, task_id):
                return False  # its worker holds it (``alive`` cannot see other hosts)
            now = to_us(utcnow())
            conn.execute(
                "UPDATE tasks SET status = 'failed', errors = %s::jsonb, claimed_by = NULL, "
                "updated_at = %s, completed_at = %s WHERE id = %s",
                (json.dumps([reason]), now, now, task_id),
            )
        return True

    def release_task(self, task_id: str, claimant: str) -> bool:
        """Queue again a task its worker stopped on request; the attempt does not count."""
        with self.write() as conn:
            cursor = conn.execute(
                "UPDATE tasks SET status = 'queued', claimed_by = NULL, "
                "attempts = GREATEST(attempts - 1, 0), updated_at = %s "
                "WHERE id = %s AND status = 'running' AND claimed_by = %s",
                (to_us(utcnow()), task_id, claimant),
            )
        self._drop_lease(task_id, claimant)
        return cursor.rowcount == 1

    def requeue_task(self, task_id: str, payload_changes: dict[str, Any]) -> None:
        with self.write() as conn:
            row = conn.execute(
                "SELECT payload FROM tasks WHERE id = %s FOR UPDATE", (task_id,)
            ).fetchone()
            if row is None:
                return
            payload = {**json.loads(row[0]), **payload_changes}
            conn.execute(
                "UPDATE tasks SET status = 'queued', payload = %s::jsonb, result = '{}', "
                "errors = '[]', attempts = 0, claimed_by = NULL, completed_at = NULL, "
                "updated_at = %s WHERE id = %s",
                (json.dumps(payload, ensure_ascii=False), to_us(utcnow()), task_id),
            )

    def requeue_orphans(self, alive: Callable[[str], bool], kind: str) -> tuple[int, list[str]]:
        """Queue again the running tasks whose lease nobody holds; fail those tried too often.

        ``alive`` (process ids, for SQLite) is not needed: a lease shows a live worker
        on any host. Returns how many orphans there were and the ids of those given up.
        """
        return self._requeue_unleased(kind, give_up=True)

    def _requeue_unleased(self, kind: str, give_up: bool = False) -> tuple[int, list[str]]:
        """Orphans (running, unleased) queued again; with ``give_up``, those tried
        ``MAX_ATTEMPTS`` times failed instead (a starting worker cleans up after them)."""
        with self.write() as conn:
            rows = conn.execute(
                "SELECT id, attempts FROM tasks WHERE status = 'running' AND kind = %s "
                "FOR UPDATE SKIP LOCKED",
                (kind,),
            ).fetchall()
            orphans = [(i, a) for i, a in rows if self._unleased(conn, i)]
            now = to_us(utcnow())
            given_up = []
            for task_id, attempts in orphans:
                if attempts >= MAX_ATTEMPTS and give_up:
                    given_up.append(task_id)
                    conn.execute(
                        "UPDATE tasks SET status = 'failed', errors = %s::jsonb, "
                        "updated_at = %s, completed_at = %s, claimed_by = NULL WHERE id = %s",
                        (json.dumps([f"gave up after {attempts} attempts"]), now, now, task_id),
                    )
                elif attempts < MAX_ATTEMPTS:
                    conn.execute(
                        "UPDATE tasks SET status = 'queued', claimed_by = NULL, updated_at = %s "
                        "WHERE id = %s",
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
                "INSERT INTO learned_noise(tenant_id, space_id, memory_id, content, vector, at) "
                "VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
                (
                    tenant_id,
                    space_id,
                    memory_id,
                    content,
                    np.asarray(vector, dtype=np.float32),
                    to_us(utcnow()),
                ),
            )

    def learned_noise(self, space_id: str, limit: int) -> npt.NDArray[np.float32] | None:
        rows = self.all(
            "SELECT vector FROM learned_noise WHERE space_id = %s ORDER BY id DESC LIMIT %s",
            (space_id, limit),
        )
        vectors = [np.asarray(r[0], dtype=np.float32) for r in reversed(rows)]
        return np.stack(vectors) if vectors else None
