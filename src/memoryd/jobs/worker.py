"""One background thread per process that runs queued smart-ingest tasks.

Tasks live in the database, not in memory: a worker claims one at a time
(never two of one space, across processes), runs it and records the result.
On start it first queues again what a dead worker left running, so killing
a server in the middle of a task loses nothing: the next start finishes it.
A task that fails is recorded as failed with its error; the raw messages it
came from are stored already and stay searchable.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

from memoryd.errors import MemorydError, ValidationError
from memoryd.store.protocol import TaskRecords

log = logging.getLogger(__name__)

# how long an idle worker sleeps before it looks for tasks queued by other processes
POLL_S = 1.0
INGEST = "ingest"


class TaskInterrupted(Exception):
    """Raised by a task that stopped because its process is stopping on request.

    The worker queues the task again instead of failing it: the next worker
    (another run of the command, ``memoryd serve``) takes it up.
    """


def wait_until_done(
    get_task: Callable[[str], dict[str, Any]], task_id: str, timeout_s: float, poll_s: float
) -> dict[str, Any]:
    """A task once it completed or failed, read by ``get_task`` (local or over HTTP)."""
    deadline = time.monotonic() + timeout_s
    while True:
        task = get_task(task_id)
        if task["status"] in ("completed", "failed"):
            return task
        if time.monotonic() > deadline:
            raise ValidationError(f"task {task_id} is still {task['status']}")
        time.sleep(poll_s)


def worker_alive(worker: str, own: str) -> bool:
    """Whether the worker named ``host:pid`` (``/thread`` after it) still runs.

    Another host's is assumed to.
    """
    worker = worker.split("/", 1)[0]
    host, _, pid = worker.rpartition(":")
    if worker == own:
        return False  # this worker is starting: whatever it had claimed before is orphaned
    if host != socket.gethostname() or not pid.isdigit():
        return True
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class TaskWorker:
    """Runs tasks of one ``kind`` on ``threads`` threads (each claims its own task)."""

    def __init__(
        self,
        store: TaskRecords,
        run: Callable[[dict[str, Any]], dict[str, Any]],
        kind: str = INGEST,
        threads: int = 1,
        on_give_up: Callable[[str], None] | None = None,
    ) -> None:
        """``on_give_up`` cleans up after a task interrupted ``MAX_ATTEMPTS`` times."""
        self.store = store
        self.run = run
        self.kind = kind
        self.threads = threads
        self.on_give_up = on_give_up
        self.worker_id = f"{socket.gethostname()}:{os.getpid()}"
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._pool: list[threading.Thread] = []

    def start(self) -> None:
        orphans, given_up = self.store.requeue_orphans(
            lambda w: worker_alive(w, self.worker_id), self.kind
        )
        if orphans:
            log.info("found %d %s task(s) left by a stopped worker", orphans, self.kind)
        if self.on_give_up is not None:
            for task_id in given_up:
                self.on_give_up(task_id)
        for n in range(self.threads):
            thread = threading.Thread(
                target=self._loop,
                args=(f"{self.worker_id}/{n}",),
                name=f"memoryd-{self.kind}-{n}",
                daemon=True,
            )
            thread.start()
            self._pool.append(thread)

    def notify(self) -> None:
        self._wake.set()

    def stop(self) -> None:
        """Finish the task in hand, then stop; queued tasks wait for the next start."""
        self.stop_claiming()
        for thread in self._pool:
            thread.join()

    def stop_claiming(self) -> None:
        """Take no new task (the one in hand goes on, or stops at its next checkpoint)."""
        self._stop.set()
        self._wake.set()

    def _loop(self, claimant: str) -> None:
        """Claim and run tasks; ``claimant`` (process and thread) is who holds a claimed task."""
        while not self._stop.is_set():
            try:
                task = self.store.claim_task(claimant, self.kind)
            except MemorydError as exc:
                log.error("cannot claim a task: %s", exc.message)
                task = None
            if task is None:
                self._wake.wait(POLL_S)
                self._wake.clear()
                continue
            self._run(task, claimant)

    def _run(self, task: dict[str, Any], claimant: str) -> None:
        try:
            result = {**task["result"], **self.run(task)}
        except TaskInterrupted:
            log.info("task %s stopped on request; queued again", task["id"])
            self.store.release_task(task["id"], claimant)
            return
        except Exception as exc:  # recorded on the task and logged: the raw data is safe
            log.exception("task %s failed", task["id"])
            message = (
                exc.message if isinstance(exc, MemorydError) else f"{type(exc).__name__}: {exc}"
            )
            self._finish(task["id"], claimant, "failed", task["result"], [message])
            return
        self._finish(task["id"], claimant, "completed", result, [])

    def _finish(
        self, task_id: str, claimant: str, status: str, result: dict[str, Any], errors: list[str]
    ) -> None:
        if not self.store.finish_task(task_id, claimant, status, result, errors):
            log.info("task %s was queued again while it finished: the new run stands", task_id)
