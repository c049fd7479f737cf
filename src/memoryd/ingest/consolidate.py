"""Consolidation (seed 001's job), made non-destructive: it works through the reconciler.

The seed's job rewrote the store with what an LLM kept. Here every memory
is put to the reconciler again, as if it had just been said, against the
memories older than it (the live distilled and stated ones, found as smart
ingest finds them), and its decision is applied with history:

* a duplicate (SKIP, SUPPORT) is retired, superseded by the memory it
  repeats, which gains the confidence a repeat gives; a pinned memory is
  the one kept;
* a MERGE writes the combined text into the older memory (its previous text
  stays in its history) and retires the newer one into it;
* a change of fact (SUPERSEDE, and a CONTRADICT, which consolidation exists
  to resolve) retires the older memory, superseded by the newer one, its
  validity ended when the newer one was said;
* anything else (CREATE, CONTEXTUALIZE) leaves both.

A retired memory is never deleted: ``history`` shows what happened and
``as_of`` a time before still finds it. ``enforce`` (category rules,
pinned protection) has the last word, as in ingest. Without an LLM the
rules decide; with one, the slot guard first, then one call per batch.

It runs as a task of its own kind, so a crash or a stop loses nothing:
the task is queued again and the run is idempotent (what a run retired is
no longer live, so the next run goes on from what is left).
"""

from __future__ import annotations

import logging
import uuid
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from memoryd.ingest.apply import retire
from memoryd.ingest.memories import TenantMemories
from memoryd.ingest.neighbours import EXTRACTED_TYPES, existing_for
from memoryd.ingest.reconcile import (
    SUPPORT_CONFIDENCE_STEP,
    Candidate,
    Decision,
    Fact,
    enforce,
    merged_text,
    rule_decision,
    slot_guard,
    slot_value,
)
from memoryd.ingest.reconcile_llm import Verdict, reconcile_with_llm
from memoryd.ingest.rules import extract_facts
from memoryd.jobs.worker import TaskInterrupted
from memoryd.llm import LLMClient, LLMError, Usage
from memoryd.models import Memory, MemoryType, personal_space, utcnow
from memoryd.periodic import Periodic
from memoryd.store import MemoryFilter

if TYPE_CHECKING:
    from memoryd.engine import Engine
    from memoryd.jobs.worker import TaskWorker

log = logging.getLogger(__name__)

CONSOLIDATE = "consolidate"  # the task kind
# memories decided together (one LLM call at most), then applied in order
BATCH = 20
# memories read per page of the scan
PAGE = 500
DUPLICATE = frozenset((Decision.SKIP, Decision.SUPPORT))
CHANGE = frozenset((Decision.SUPERSEDE, Decision.CONTRADICT))


def fact_of(memory: Memory) -> Fact:
    """A stored memory as the reconciler takes a new fact: its slot from its marks (or its
    words), and what its sentence says about change, read again by the rules."""
    slot, value, negative = slot_value(memory)
    fact = Fact(
        content=memory.content,
        category=memory.category,
        tags=[],
        importance=memory.importance,
        confidence=memory.confidence,
        slot=slot,
        value=value,
        negative=negative,
        valid_from=memory.said_at,
        session_id=memory.session_id,
    )
    if slot is not None:
        said = extract_facts([("user", memory.l1_overview or memory.content)])
        same = next((f for f in said if f.slot == slot), None)
        if same is not None:
            fact.change, fact.exclusive, fact.ends = same.change, same.exclusive, same.ends
            fact.old_value = same.old_value
    return fact


@dataclass
class Consolidation:
    """One consolidation run over one tenant's personal space."""

    memories: TenantMemories
    llm: LLMClient | None = None
    interrupted: Any = None  # a threading.Event set when the process is stopping

    def live(self) -> list[Memory]:
        """The live distilled and stated memories, oldest first."""
        mine, out, offset = self.memories, [], 0
        live = MemoryFilter(memory_type=list(EXTRACTED_TYPES), live_at=utcnow())
        while True:
            rows, _ = mine.store.list_memories(
                mine.tenant_id, [mine.space_id], live, sort="created_at", order="asc",
                limit=PAGE, offset=offset,
            )  # fmt: skip
            out += rows
            if len(rows) < PAGE:
                return sorted(out, key=lambda m: m.said_at)
            offset += PAGE

    def run(self) -> dict[str, Any]:
        _ = self.memories.engine.embedder  # load the model and bind the store's index to it
        memories = self.live()
        retired: set[str] = set()
        counts: Counter[str] = Counter()
        usage = Usage()
        errors: list[str] = []
        for i in range(0, len(memories), BATCH):
            if self.interrupted is not None and self.interrupted.is_set():
                raise TaskInterrupted("consolidation interrupted")
            batch = [m for m in memories[i : i + BATCH] if m.id not in retired]
            self._batch(batch, retired, counts, usage, errors)
        result: dict[str, Any] = {
            "memories_checked": len(memories),
            "retired": len(retired),
            "decisions": dict(counts),
            "consolidator": "rules"
            if self.llm is None
            else ("rules (llm failed)" if errors else "llm"),
        }
        if self.llm is not None:
            result |= {"llm": usage.as_dict(), "llm_errors": errors}
        return result

    def _batch(
        self,
        batch: list[Memory],
        retired: set[str],
        counts: Counter[str],
        usage: Usage,
        errors: list[str],
    ) -> None:
        mine = self.memories
        vectors = mine.store.vectors_of([m.id for m in batch])
        work: list[tuple[Memory, Fact, list[Candidate]]] = []
        for memory in batch:
            vector = vectors.get(memory.id)
            if vector is None:
                continue
            fact = fact_of(memory)
            older = [
                c
                for c in existing_for(mine, fact, np.asarray(vector, dtype=np.float32))
                if c.memory.id != memory.id
                and c.memory.id not in retired
                and (c.memory.said_at, c.memory.id) < (memory.said_at, memory.id)
            ]
            if older:
                work.append((memory, fact, older))
        verdicts: list[Verdict | None] = [None] * len(work)
        ask = []
        for i, (_, fact, older) in enumerate(work):
            guarded = slot_guard(fact, older)
            if guarded is not None:
                verdicts[i] = Verdict(*guarded)
            elif self.llm is not None and not errors:
                ask.append(i)
        if ask and self.llm is not None:
            try:
                answered = reconcile_with_llm(
                    self.llm, [work[i][1] for i in ask], [work[i][2] for i in ask], usage
                )
            except LLMError as exc:
                errors.append(f"consolidation: {exc.message}")
                answered = [None] * len(ask)
            for i, verdict in zip(ask, answered, strict=True):
                verdicts[i] = verdict
        for (memory, fact, older), verdict in zip(work, verdicts, strict=True):
            if memory.id in retired:
                continue
            if verdict is None or (verdict.target is not None and verdict.target.id in retired):
                # the model gave none, or its target was retired earlier in this batch:
                # the rules decide against what is still live
                verdict = Verdict(
                    *rule_decision(fact, [c for c in older if c.memory.id not in retired])
                )
            target = verdict.target
            if target is None:
                continue
            decision = enforce(verdict.decision, fact, target)
            counts[decision.value] += 1
            gone = self._apply(decision, verdict, memory, target)
            if gone is not None:
                retired.add(gone)

    def _apply(self, decision: Decision, verdict: Verdict, new: Memory, old: Memory) -> str | None:
        """Apply one decision about ``new`` against ``old``; the id it retired.

        Whatever was decided, the memory said later (by when it was said, not
        when it was stored: an old chat imported late is older) is never the
        one retired: a duplicate keeps the pinned one, else the later; a merge
        is written onto the later; a change retires the earlier.
        """
        mine, now = self.memories, utcnow()
        later, earlier = (new, old) if new.said_at >= old.said_at else (old, new)
        if decision in DUPLICATE:
            if _pinned(earlier) and not _pinned(later):
                later, earlier = earlier, later
            mine.update(later.id, confidence=min(1.0, later.confidence + SUPPORT_CONFIDENCE_STEP))
            mine.update(earlier.id, invalidated_at=now, superseded_by=later.id, valid_to=now)
            return earlier.id
        if decision is Decision.MERGE:
            merged = verdict.merged_content or merged_text(earlier.content, later.content)
            mine.update(later.id, content=merged)
            mine.update(earlier.id, invalidated_at=now, superseded_by=later.id, valid_to=now)
            return earlier.id
        if decision in CHANGE:
            retire(mine, earlier, later, later.said_at)
            return earlier.id
        return None


def _pinned(memory: Memory) -> bool:
    return memory.memory_type is MemoryType.PINNED


def queue_consolidation(engine: Engine, tenant_id: str, reason: str = "manual") -> str:
    """Queue a consolidation of the tenant's personal space: its task id (or the id of the
    one already queued or running)."""
    store, space_id = engine.store, personal_space(tenant_id)
    task_id = store.open_task(tenant_id, space_id, CONSOLIDATE)
    if task_id is None:
        task_id = str(uuid.uuid4())
        with store.write() as conn:
            store.record_task(
                conn, task_id, tenant_id, space_id, CONSOLIDATE, "queued",
                {"reason": reason}, payload={"reason": reason},
            )  # fmt: skip
    start_consolidation_worker(engine).notify()
    return task_id


def start_consolidation_worker(engine: Engine) -> TaskWorker:
    """The process's consolidation worker (resuming an interrupted run first)."""
    from memoryd.llm import create_llm  # None without an LLM configured: rules decide

    def run(task: dict[str, Any]) -> dict[str, Any]:
        mine = TenantMemories(engine, task["tenant_id"])
        return Consolidation(mine, create_llm(engine.settings), engine.interrupted).run()

    return engine.start_worker(run, CONSOLIDATE)


class Schedule(Periodic):
    """Queues a consolidation of every active tenant every ``interval_s`` (``memoryd serve``)."""

    name = "memoryd-consolidate"

    def __init__(self, engine: Engine, interval_s: float) -> None:
        self.engine = engine
        super().__init__(interval_s, engine.store.take_turn)

    def run_once(self) -> list[str]:
        """Queue one consolidation per active tenant; the task ids."""
        queued = []
        for tenant_id in self.engine.store.active_tenant_ids():
            try:
                task_id = queue_consolidation(self.engine, tenant_id, "scheduled")
            except Exception:  # one tenant's failure must not stop the others' (logged)
                log.exception("cannot queue the consolidation of tenant %s", tenant_id)
                continue
            queued.append(task_id)
        return queued
