"""After the answer: the exchange is remembered, off the response path.

The new user messages and the assistant's answer are captured like any
conversation: raw turns first, so they are never lost, then smart ingest
distils them with the same rules as every other door (seed 002's
preferences, decisions and habits are among them: "I prefer Python over
Go", "I chose Postgres", "I usually deploy on Fridays"), so one sentence is
one memory, reconciled against what is known, never a second copy of it.
Only the user's words become facts: in the answer, "I prefer" is the model
speaking, not the user.

It runs in a helper process scheduled as idle work, so the embedding and
distilling it does never hold up an answer. A failure is logged and never
reaches the client: the answer went out before any of this ran.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import multiprocessing
import os
import threading
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass

from memoryd.config import Settings
from memoryd.periodic import exit_with
from memoryd.service import MemoryService

log = logging.getLogger("memoryd.proxy")

SOURCE = "proxy"


@dataclass(frozen=True)
class Exchange:
    """One request's new user messages, to be remembered with the answer they got."""

    tenant_id: str
    user_messages: tuple[str, ...]
    session_id: str
    model: str


def remember(svc: MemoryService, exchange: Exchange, answer: str | None) -> str | None:
    """Raw turns (with the answer, when there is one), then smart ingest: the task's id."""
    svc = svc.for_tenant(exchange.tenant_id)
    messages = [{"role": "user", "content": m} for m in exchange.user_messages if m.strip()]
    if answer and answer.strip():
        messages.append({"role": "assistant", "content": answer})
    if not messages:
        return None
    return svc.ingest(messages, session_id=exchange.session_id, mode="smart", source=SOURCE).task_id


# ---------------------------------------------------------------------- the helper process
# Remembering embeds turns and facts and runs the smart ingest: CPU work that, in the
# server's process, would hold the interpreter lock the answers need. It runs in a
# helper process of its own, on the same database file, scheduled as idle work where the
# system allows (Linux's SCHED_IDLE: any request's thread takes the core from it at once;
# ``bench proxy`` measured p95 overhead 31 -> 25 ms at one stream against niceness 10),
# else at a lower priority.
HELPER_NICENESS = 10
PARENT_CHECK_S = 1.0
_helper: MemoryService | None = None


def _start_helper(settings: Settings, parent: int) -> None:
    """The helper's start: idle priority, and it exits with the server (``kill -9`` too).

    An exchange it was storing then is rolled back by SQLite, as any
    interrupted write is.
    """
    global _helper
    logging.basicConfig(level=logging.WARNING, format="%(name)s: %(levelname)s: %(message)s")
    try:  # Linux: the helper runs only on a core nothing else wants
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    except (AttributeError, OSError):
        with contextlib.suppress(OSError):  # no nice either: same priority, still apart
            os.nice(HELPER_NICENESS)
    exit_with(parent, PARENT_CHECK_S)
    _helper = MemoryService(settings=settings)
    atexit.register(_helper.close)


def _remember_in_helper(exchange: Exchange, answer: str | None) -> None:
    assert _helper is not None, "the helper process was not started"
    remember(_helper, exchange, answer)


class Extractor:
    """Hands exchanges to the helper process, which remembers them in order.

    The process starts with the first exchange (a server that proxies nothing
    never starts it) and is started again if it dies; what it was doing then
    is logged as lost.
    """

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._lock = threading.Lock()
        self._pool: ProcessPoolExecutor | None = None

    def _executor(self) -> ProcessPoolExecutor:
        with self._lock:
            if self._pool is None:
                self._pool = ProcessPoolExecutor(
                    max_workers=1,
                    mp_context=multiprocessing.get_context("spawn"),
                    initializer=_start_helper,
                    initargs=(self.settings, os.getpid()),
                )
            return self._pool

    def submit(self, exchange: Exchange, answer: str | None, retried: bool = False) -> Future[None]:
        pool = self._executor()
        try:
            future = pool.submit(_remember_in_helper, exchange, answer)
        except BrokenProcessPool:  # the helper died: a new one takes this exchange
            self._discard(pool)
            pool = self._executor()
            future = pool.submit(_remember_in_helper, exchange, answer)
        future.add_done_callback(lambda done: self._done(done, pool, exchange, answer, retried))
        return future

    def _discard(self, broken: ProcessPoolExecutor) -> None:
        """Forget a pool whose process died (only that one: a new one may be running)."""
        with self._lock:
            if self._pool is broken:
                self._pool = None
        broken.shutdown(wait=False)

    def _done(
        self,
        done: Future[None],
        pool: ProcessPoolExecutor,
        exchange: Exchange,
        answer: str | None,
        retried: bool,
    ) -> None:
        """The client has its answer: the log says what was not remembered, and why.

        An exchange whose helper died under it is handed to a new helper once
        (what the dead one stored already is not stored twice).
        """
        error = done.exception()
        if isinstance(error, BrokenProcessPool) and not retried:
            log.warning("the remembering process stopped; starting another")
            self._discard(pool)
            self.submit(exchange, answer, retried=True)
        elif error is not None:
            log.error(
                "could not remember an exchange of tenant %s (session %s): %s",
                exchange.tenant_id,
                exchange.session_id,
                error,
            )

    def close(self) -> None:
        """Finish what was handed over (a stopping server still remembers it), then stop."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True)
