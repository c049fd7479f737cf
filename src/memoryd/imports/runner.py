"""One import task, run by the import worker: from decoded file to memories.

Every memory write of the run is journalled (:func:`recording`), so an
import is all or nothing in the end: a run that fails rolls back what it
wrote before the task is marked failed, and a run interrupted by a crash
is rolled back when the task is claimed again, then started over. Progress
(units done of units to do) is written after each unit, so a client
polling the import sees it move, and sees ``processing`` on whatever is
visible before the end.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar

from memoryd.errors import MemorydError
from memoryd.imports.category import CategoryGuess
from memoryd.imports.extract import chunk_facts, rule_fact, summary_fact
from memoryd.imports.split import (
    SMART_SPLIT_MAX_CHARS,
    Strategy,
    first_sentence,
    smart_split,
    split_sections,
)
from memoryd.ingest.capture import capture
from memoryd.ingest.direct import build_direct_memory
from memoryd.ingest.reconcile import Fact
from memoryd.ingest.select import MESSAGE_BUDGET
from memoryd.ingest.smart import LLM, LLM_FAILED, Report, SmartIngest, facts_from_rules
from memoryd.jobs.worker import TaskInterrupted
from memoryd.llm import LLMClient, LLMError, Usage
from memoryd.models import MAX_L0_CHARS, MemoryType
from memoryd.prompts import DOCUMENT_SYSTEM, SECTION_SYSTEM
from memoryd.store.imports import recording

log = logging.getLogger(__name__)
T = TypeVar("T")

IMPORT = "import"
# seed 000 §1.2: at most 3 imports extract at once (reconciliation is
# serialised per space by the task claim: one running task per space)
IMPORT_CONCURRENCY = 3
# messages per conversation call of the capture path (its per-call limit)
CAPTURE_BATCH = 1000
# imported text is stored (and found) in passages of about this size
PASSAGE_MAX_CHARS = 2_000
# passages embedded and written together (one model call, one transaction)
PASSAGE_BATCH = 32
# an import stopped half-way on request: rolled back, queued to run again when resumed
INTERRUPTED = "interrupted"
# reconciler decisions that store a new memory
CREATING_DECISIONS = ("create", "supersede", "contextualize", "contradict")
# what an import says about the units that did not become memories of their own
NOTES = {
    "skip": "{n} {unit} repeated what memory already holds and {were} not stored again",
    "merge": "{n} {unit} {were} merged into a memory that says nearly the same",
    "support": "{n} {unit} confirmed a memory already held ({were} not stored again)",
}


@dataclass
class Progress:
    """The counters an ImportTask shows, updated as units finish."""

    units: int = 0
    done: int = 0
    stored: int = 0
    facts: int = 0
    decisions: Counter[str] = field(default_factory=Counter)
    errors: list[str] = field(default_factory=list)
    extractor: str = "rules"
    usage: Usage = field(default_factory=Usage)
    unit: str = "facts"  # what a reconciler decision is about, for the notes

    def add(self, result: dict[str, Any]) -> None:
        self.facts += int(result.get("facts_extracted", 0))
        self.decisions.update(result.get("decisions") or {})
        self.errors += [e for e in result.get("llm_errors") or [] if e not in self.errors]
        self.extractor = str(result.get("extractor", self.extractor))

    def fields(self) -> dict[str, Any]:
        d = self.decisions
        return {
            "sources_stored": self.stored,
            "extraction_chunks": self.units,
            "extraction_progress": self.done,
            "extraction_facts": self.facts,
            "reconcile_progress": sum(d.values()),
            "reconcile_relations": d["supersede"] + d["contextualize"] + d["contradict"],
            "reconcile_merged": d["merge"],
            "decisions": dict(d),
            "extractor": self.extractor,
            "memories_created": self.stored + sum(d[k] for k in CREATING_DECISIONS),
            "llm": self.usage.as_dict(),
            "notes": [
                note.format(
                    n=d[decision],
                    unit=self.unit if d[decision] > 1 else self.unit.removesuffix("s"),
                    were="were" if d[decision] > 1 else "was",
                )
                for decision, note in NOTES.items()
                if d[decision]
            ],
        }


class ImportRunner:
    """Runs the import tasks of one tenant view (``smart`` holds its LLM, or None)."""

    def __init__(self, smart: SmartIngest) -> None:
        self.smart = smart
        self.memories = smart.memories
        self.store = smart.store
        self.llm = smart.llm
        self.category = CategoryGuess(self.memories.embed)

    def run(self, task: dict[str, Any]) -> dict[str, Any]:
        payload = task["payload"]
        import_id = payload["import_id"]
        if self.store.journal_size(import_id):  # an earlier attempt died half-way
            deleted, _ = self.store.rollback_import(import_id)
            log.info("import %s: rolled back %d memories of an interrupted run", import_id, deleted)
        progress = Progress(unit=_unit_name(payload))
        try:
            with recording(import_id):
                self._run(import_id, payload, progress)
        except TaskInterrupted:
            deleted, _ = self.store.rollback_import(import_id)
            # what it shows is what is left: nothing written, queued to run again
            left = Progress(units=progress.units, unit=progress.unit).fields()
            self.store.update_import(
                import_id,
                **left,
                status=INTERRUPTED,
                extraction_status=INTERRUPTED if payload["post_process"] else "skipped",
                reconcile_status=INTERRUPTED if payload["post_process"] else "skipped",
                errors=[
                    f"interrupted at {progress.done} of {progress.units} units; what it had "
                    f"written is rolled back ({deleted} memories) and the import runs again "
                    "from the start when resumed"
                ],
            )
            raise
        except Exception as exc:
            deleted, _ = self.store.rollback_import(import_id)
            message = (
                exc.message
                if isinstance(exc, MemorydError)
                else f"internal error ({type(exc).__name__})"
            )
            self.store.update_import(
                import_id,
                status="failed",
                extraction_status="failed",
                reconcile_status="failed",
                errors=[
                    *progress.errors,
                    message,
                    f"partial results rolled back ({deleted} memories)",
                ],
            )
            raise
        final = {**progress.fields(), "errors": progress.errors}
        if payload["post_process"]:
            final |= {"extraction_status": "completed", "reconcile_status": "completed"}
        self.store.update_import(import_id, status="completed", **final)
        return {"import_id": import_id, **final}

    # ------------------------------------------------------------------ routing
    def _run(self, import_id: str, payload: dict[str, Any], progress: Progress) -> None:
        running = {"extraction_status": "running", "reconcile_status": "running"}
        self.store.update_import(
            import_id,
            status="processing",  # an interrupted run taken up again
            **(running if payload["post_process"] else {}),
            errors=[],
        )
        base = {
            "session_id": f"import-{import_id}",
            "agent_id": payload.get("agent_id"),
            "tags": payload.get("tags") or [],
            "source": payload.get("source") or f"import:{payload['filename']}",
        }
        if payload.get("conversations"):
            self._conversations(import_id, payload, base, progress)
            return
        text: str = payload["text"]
        strategy = Strategy(payload["strategy"])
        if not payload["post_process"] or strategy is Strategy.ATOMIC:
            self._chunks(import_id, text, base, progress, extract=payload["post_process"])
        elif strategy is Strategy.SECTION:
            units = [(s.heading, part) for s in split_sections(text) for part in _parts(s.text)]
            self._summaries(import_id, units, SECTION_SYSTEM, base, progress)
        else:
            self._summaries(import_id, [("", text)], DOCUMENT_SYSTEM, base, progress)

    def _tick(self, import_id: str, progress: Progress) -> None:
        progress.done += 1
        self.store.update_import(import_id, **progress.fields(), errors=progress.errors)
        self._checkpoint()

    def _checkpoint(self) -> None:
        """Between units: stop here when the process is stopping on request (Ctrl-C)."""
        if self.memories.engine.interrupted.is_set():
            raise TaskInterrupted("import interrupted")

    # ------------------------------------------------------------------ the paths
    def _conversations(
        self, import_id: str, payload: dict[str, Any], base: dict[str, Any], p: Progress
    ) -> None:
        """Chat exports: the conversation path, raw turns first, then facts per window."""
        conversations = payload["conversations"]
        windows = [list(_batches(conv["messages"], MESSAGE_BUDGET)) for conv in conversations]
        p.units = sum(len(w) for w in windows)
        for n, (conv, conv_windows) in enumerate(zip(conversations, windows, strict=True)):
            session = {**base, "session_id": f"import-{import_id}-{n}"}
            for batch in _batches(conv["messages"], CAPTURE_BATCH):
                stored = capture(
                    self.memories,
                    batch,
                    session_id=session["session_id"],
                    agent_id=session["agent_id"],
                    mode="raw",
                    dates=None,
                    tags=session["tags"] or None,
                    source=session["source"],
                )
                p.stored += stored.stored_count
            for window in conv_windows:
                if payload["post_process"]:
                    said = [_with_said_at(m) for m in window]  # dated facts, as ingest dates them
                    p.add(self.smart.run({**session, "messages": said}))
                self._tick(import_id, p)

    def _chunks(
        self, import_id: str, text: str, base: dict[str, Any], p: Progress, extract: bool
    ) -> None:
        """Plain text: stored as passages first, then facts per chunk (LLM or rules).

        The passages (not the 80,000-character extraction chunks) are what
        search returns: a vector covers the start of a text only, and a
        passage is something a person can read in a result.
        """
        pieces = passages(text)
        chunks = smart_split(text) if extract else []
        batches = range(0, len(pieces), PASSAGE_BATCH)
        p.units = len(batches) + len(chunks)  # each batch of passages is a unit of its own
        for start in batches:
            batch = pieces[start : start + PASSAGE_BATCH]
            memories = [
                build_direct_memory(
                    passage,
                    tenant_id=self.memories.tenant_id,
                    space_id=self.memories.space_id,
                    memory_type=MemoryType.SESSION,
                    session_id=base["session_id"],
                    agent_id=base["agent_id"],
                    tags=base["tags"],
                    source=base["source"],
                    l0_abstract=first_sentence(passage, MAX_L0_CHARS),
                )
                for passage in batch
            ]
            vectors = self.memories.embed([m.content for m in memories])
            self.store.insert_memories(memories, vectors, actor=base["agent_id"])
            p.stored += len(memories)
            self._tick(import_id, p)
        for chunk in chunks:
            p.add(self.smart.reconcile(self._chunk_facts(chunk, p), base, Report(p.extractor)))
            self._tick(import_id, p)

    def _chunk_facts(self, chunk: str, p: Progress) -> list[Fact]:
        return self._by_llm(
            "extraction",
            lambda llm: chunk_facts(llm, chunk, p.usage),
            lambda: facts_from_rules([("user", chunk)]),
            p,
        )

    def _summaries(
        self,
        import_id: str,
        units: list[tuple[str, str]],
        system: str,
        base: dict[str, Any],
        p: Progress,
    ) -> None:
        """Sections or a document: one memory each, its text as content."""
        p.units = len(units)
        for heading, text in units:
            fact = self._summary(system, heading, text, p)
            report = Report(p.extractor)
            p.add(self.smart.reconcile([fact], base, report, screen=False))
            self._tick(import_id, p)

    def _summary(self, system: str, heading: str, text: str, p: Progress) -> Fact:
        return self._by_llm(
            "summary",
            lambda llm: summary_fact(llm, system, text, p.usage),
            lambda: rule_fact(text, heading, self.category(text)),
            p,
        )

    def _by_llm(
        self, stage: str, ask: Callable[[LLMClient], T], rules: Callable[[], T], p: Progress
    ) -> T:
        """The LLM's answer; the rules' once it failed (and for the rest of the import)."""
        if self.llm is not None and p.extractor != LLM_FAILED:
            try:
                answer = ask(self.llm)
            except LLMError as exc:
                p.errors.append(f"{stage}: {exc.message}")
                p.extractor = LLM_FAILED
            else:
                p.extractor = LLM
                return answer
        return rules()


def _unit_name(payload: dict[str, Any]) -> str:
    strategy = payload.get("strategy")
    if payload.get("conversations") or strategy == Strategy.ATOMIC.value:
        return "facts"
    return "sections" if strategy == Strategy.SECTION.value else "documents"


def passages(text: str) -> list[str]:
    """The pieces imported text is stored (and found) in."""
    return smart_split(text, PASSAGE_MAX_CHARS, 0)


def _parts(text: str) -> Iterator[str]:
    """A section as it is, or in overlapping parts when it is longer than a chunk."""
    yield from smart_split(text) if len(text) > SMART_SPLIT_MAX_CHARS else [text]


def _batches(items: list[dict[str, Any]], size: int) -> Iterator[list[dict[str, Any]]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


def _with_said_at(message: dict[str, Any]) -> dict[str, Any]:
    """A chat export's message as the slow path reads it: its time said as ``said_at``."""
    if message.get("created_at") and not message.get("said_at"):
        return {**message, "said_at": message["created_at"]}
    return message
