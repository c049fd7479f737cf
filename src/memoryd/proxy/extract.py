"""After the answer: the exchange is remembered, off the response path.

The new user messages and the assistant's answer are captured like any
conversation (raw turns first, so they are never lost, then the smart
ingest's distillation), and seed 002's three regex families read the
user's words: preferences ("I prefer Python over Go"), decisions ("I chose
Postgres") and habits ("I usually deploy on Fridays"). Each fact is
sanitised (trimmed, whitespace collapsed, 500 characters), keyed by its
family and words, deduplicated in the batch, and upserted by that key, so
saying it again changes nothing. Only the user's words are read: in the
answer, "I prefer" is the model speaking, not the user.

It runs in a helper process scheduled as idle work, so the embedding and
distilling it does never hold up an answer. A failure is logged and never
reaches the client: the answer went out before any of this ran.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import logging
import multiprocessing
import os
import re
import threading
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass

from memoryd.config import Settings
from memoryd.ingest.privacy import redact
from memoryd.models import Category
from memoryd.periodic import exit_with
from memoryd.service import MemoryService

log = logging.getLogger("memoryd.proxy")

# seed 002's limits: the newest 64 KiB of text are read, a fact is at most 500 characters
MAX_EXTRACTION_CHARS = 64 * 1024
MAX_FACT_CHARS = 500
MAX_KEY_WORDS = 12
SOURCE = "proxy"


@dataclass(frozen=True)
class Family:
    name: str  # the key's prefix
    category: Category
    patterns: tuple[re.Pattern[str], ...]


def _compile(*patterns: str) -> tuple[re.Pattern[str], ...]:
    return tuple(re.compile(p, re.IGNORECASE) for p in patterns)


FAMILIES = (
    Family(
        "preference",
        Category.PREFERENCES,
        _compile(
            r"\bI\s+(?:really\s+|strongly\s+|much\s+|generally\s+)?(?:prefer|like|love|enjoy|"
            r"hate|dislike|can't\s+stand|cannot\s+stand)\s+\S",
            r"\bmy\s+(?:favou?rite|preferred)\s+[\w\s-]{1,40}?\s+(?:is|are)\s+\S",
            r"\bI(?:'d| would)\s+rather\s+\S",
        ),
    ),
    Family(
        "decision",
        Category.EVENTS,
        _compile(
            r"\b(?:I|we)(?:'ll|\s+will|'m\s+going\s+to|\s+am\s+going\s+to|'re\s+going\s+to|"
            r"\s+are\s+going\s+to)\s+(?:use|go\s+with|adopt|choose|pick|switch\s+to|migrate\s+to)"
            r"\s+\S",
            r"\b(?:I|we)\s+(?:chose|decided\s+(?:to|on)|went\s+with|picked|settled\s+on|"
            r"opted\s+for|switched\s+to)\s+\S",
        ),
    ),
    Family(
        "habit",
        Category.PATTERNS,
        _compile(
            r"\bI\s+(?:usually|always|often|normally|typically|regularly|never|tend\s+to)\s+\S",
            r"\bevery\s+(?:morning|evening|day|week|weekend|monday|tuesday|wednesday|thursday|"
            r"friday|saturday|sunday)\s+I\s+\S",
        ),
    ),
)
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+|\n+")
_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class Fact:
    key: str
    content: str
    family: str
    category: Category


def sanitise(text: str) -> str:
    """Trimmed, whitespace collapsed, at most 500 characters."""
    return " ".join(text.split())[:MAX_FACT_CHARS]


def fact_key(family: str, content: str) -> str:
    """``preference:i_prefer_python_over_go``: the family and the fact's first words."""
    words = _WORD.findall(content.casefold())[:MAX_KEY_WORDS]
    slug = "_".join(words)
    if not slug:  # no word characters at all: the key is the content's digest
        slug = hashlib.sha256(content.encode()).hexdigest()[:16]
    return f"{family}:{slug}"


def extract_facts(text: str) -> list[Fact]:
    """The facts seed 002's families find in ``text`` (its newest 64 KiB), one per key.

    ``<private>`` blocks are removed first: nothing said in one becomes a fact.
    """
    text = redact(text[-MAX_EXTRACTION_CHARS:]) or ""
    facts: dict[str, Fact] = {}
    for sentence in _SENTENCE_END.split(text):
        content = sanitise(sentence)
        if not content:
            continue
        for family in FAMILIES:
            if any(p.search(content) for p in family.patterns):
                key = fact_key(family.name, content)
                facts.setdefault(key, Fact(key, content, family.name, family.category))
                break  # one sentence is one fact, of the first family that reads it
    return list(facts.values())


class FactsNotStored(Exception):
    """Some facts failed (each is logged); the raw turns were stored before them."""


@dataclass(frozen=True)
class Exchange:
    """One request's new user messages, to be remembered with the answer they got."""

    tenant_id: str
    user_messages: tuple[str, ...]
    session_id: str
    model: str


def remember(svc: MemoryService, exchange: Exchange, answer: str | None) -> None:
    """Raw turns (with the answer, when there is one), then smart ingest, then the facts."""
    svc = svc.for_tenant(exchange.tenant_id)
    messages = [{"role": "user", "content": m} for m in exchange.user_messages if m.strip()]
    if answer and answer.strip():
        messages.append({"role": "assistant", "content": answer})
    if not messages:
        return
    svc.ingest(messages, session_id=exchange.session_id, mode="smart", source=SOURCE)
    failed = 0
    for fact in extract_facts("\n".join(exchange.user_messages)):
        try:
            svc.add(
                fact.content,
                key=fact.key,
                category=fact.category,
                source=SOURCE,
                tags=[SOURCE, fact.family],
                session_id=exchange.session_id,
            )
        except Exception:  # one fact that cannot be stored does not cost the others
            failed += 1
            log.exception("could not store the fact %s of tenant %s", fact.key, svc.tenant_id)
    if failed:
        raise FactsNotStored(f"{failed} fact(s) of the exchange were not stored")


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
