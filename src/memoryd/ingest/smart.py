"""The slow path of a conversation ingest, for one task: from stored messages to memories.

select → (privacy, done at capture) → extract → noise → admission → reconcile.

Without an LLM, facts come from rules and are reconciled one at a time, so
a later fact of the same conversation reconciles against what an earlier
one just wrote (the batch deduplicates itself).

With an LLM (seed 000 §1.1, §1.4): ONE call extracts the facts of the
selected messages; after noise and admission, facts whose slot the rules
recognise against an existing memory are decided by the rules (the
preference slot guard), facts with no existing memory near them are
created, and ONE more call decides the rest against the existing
memories, numbered by small integers. ``enforce`` (category rules, pinned
protection) has the last word over every decision, whoever made it.
Facts of one batch cannot see each other's writes there, so execution
skips a CREATE that repeats a memory created earlier in the same batch
and turns a change of a memory already retired in the batch into a CREATE.

Failure degrades, never loses. When the LLM fails (down, timeout, no
valid answer after the one retry) the stage falls back to the rules, and
the rest of the task stays on rules (a down LLM would only cost another
timeout). The task still *completes*: its raw turns were stored before it
was queued and stay searchable, and the rule path still gives the
memories rules can find. Marking it failed would hide those memories'
origin behind a failure and invite a retry that repeats them. What went
wrong is recorded instead: ``llm_errors`` lists the errors, ``extractor``
and ``reconciler`` say "rules (llm failed)", ``llm`` the calls, tokens and
failures. Every fact is counted by what happened to it; none disappears
unrecorded.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np
import numpy.typing as npt

from memoryd.engine import Engine
from memoryd.ingest import rules
from memoryd.ingest.admission import admit
from memoryd.ingest.apply import apply_decision
from memoryd.ingest.attributes import read_session
from memoryd.ingest.extract_llm import extract_with_llm
from memoryd.ingest.memories import TenantMemories
from memoryd.ingest.neighbours import existing_for
from memoryd.ingest.reconcile import (
    DUPLICATE_SIMILARITY,
    Candidate,
    Decision,
    Fact,
    enforce,
    rule_decision,
    slot_guard,
)
from memoryd.ingest.reconcile_llm import Verdict, reconcile_with_llm
from memoryd.ingest.select import select_messages
from memoryd.jobs.worker import TaskWorker
from memoryd.llm import LLMClient, LLMError, Usage, create_llm
from memoryd.models import parse_ts
from memoryd.text.noise import MAX_LEARNED_NOISE, NoiseFilter

# how sure a rule match is that it found a durable fact (an LLM says so per fact)
RULE_CONFIDENCE = 0.7
RULES, LLM, LLM_FAILED = "rules", "llm", "rules (llm failed)"
# decisions that leave the target memory behind: a later fact must not change it again
RETIRING = frozenset((Decision.MERGE, Decision.SUPERSEDE))


def facts_from_rules(
    messages: list[tuple[str, str]],
    dates: list[datetime | None] | None = None,
    session_id: str | None = None,
) -> list[Fact]:
    """Facts by the rule families (no LLM), about the user, with their slots and dates."""
    return [
        Fact.from_rules(f, RULE_CONFIDENCE, dates[f.message] if dates else None, session_id)
        for f in rules.extract_facts(messages, dates=dates)
    ]


@dataclass
class Report:
    """What one task did, for its result: counts, who decided, what the LLM cost."""

    extractor: str = RULES
    reconciler: str = RULES
    counts: Counter[str] = field(default_factory=Counter)
    decisions: Counter[str] = field(default_factory=Counter)
    usage: Usage = field(default_factory=Usage)
    llm_errors: list[str] = field(default_factory=list)

    def failed(self, stage: str, error: LLMError) -> None:
        self.llm_errors.append(f"{stage}: {error.message}")


class SmartIngest:
    """One task's slow path; ``llm`` None means rules only (memoryd works offline)."""

    def __init__(
        self, memories: TenantMemories, noise: NoiseFilter, llm: LLMClient | None = None
    ) -> None:
        self.memories = memories
        self.store = memories.store
        self.noise = noise
        self.llm = llm

    # ------------------------------------------------------------------ the task
    def run(self, payload: dict[str, Any]) -> dict[str, Any]:
        sent = payload.get("messages", [])
        messages = [(m["role"], m["content"]) for m in sent]
        selected = select_messages(messages)
        # when each selected message was said (tasks queued before dates were kept have none)
        dates = [parse_ts(m.get("said_at")) for m in sent][len(messages) - len(selected) :]
        report = Report()
        facts = self._extract(selected, dates, payload.get("session_id"), report)
        result = self.reconcile(facts, payload, report)
        # what each statement is about, by meaning: a newer value retires the older ones
        retired = read_session(self.memories, payload.get("session_id"))
        return {"messages_selected": len(selected), **result, "retired_by_attribute": retired}

    def reconcile(
        self, facts: list[Fact], payload: dict[str, Any], report: Report, screen: bool = True
    ) -> dict[str, Any]:
        """Stages 4-6 for ``facts``; ``screen`` False skips noise and admission.

        File imports pass sections the user chose to keep: they are
        reconciled (a repeat is not stored twice) but not judged as noise.
        """
        if self.llm is None or report.llm_errors:
            report.reconciler = LLM_FAILED if report.llm_errors else RULES
            self._reconcile_one_by_one(facts, payload, report, screen)
        else:
            self._reconcile_batch(self.llm, facts, payload, report, screen)
        result: dict[str, Any] = {
            "facts_extracted": len(facts),
            "facts_noise": report.counts["noise"],
            "facts_rejected": report.counts["rejected"],
            "decisions": dict(report.decisions),
            "extractor": report.extractor,
        }
        if self.llm is not None:
            result |= {
                "reconciler": report.reconciler,
                "slot_guarded": report.counts["slot_guarded"],
                "llm": report.usage.as_dict(),
                "llm_errors": report.llm_errors,
            }
        return result

    def _extract(
        self,
        selected: list[tuple[str, str]],
        dates: list[datetime | None],
        session_id: str | None,
        report: Report,
    ) -> list[Fact]:
        if self.llm is None:
            return facts_from_rules(selected, dates, session_id)
        try:
            facts = extract_with_llm(self.llm, selected, report.usage)
        except LLMError as exc:
            report.failed("extraction", exc)
            report.extractor = LLM_FAILED
            return facts_from_rules(selected, dates, session_id)
        report.extractor = LLM
        latest = next((d for d in reversed(dates) if d is not None), None)
        for fact in facts:  # one call for the batch: its facts hold from its last message
            fact.valid_from, fact.session_id = latest, session_id
        return facts

    # ------------------------------------------------------------------ reconciliation
    def _reconcile_one_by_one(
        self, facts: list[Fact], payload: dict[str, Any], r: Report, screen: bool
    ) -> None:
        """The rule path: each fact sees what the facts before it wrote."""
        vectors = self.memories.embed([f.content for f in facts]) if facts else None
        for i, fact in enumerate(facts):
            assert vectors is not None
            candidates = self._screen(fact, vectors[i], r.counts, screen)
            if candidates is None:
                continue
            decision, target = rule_decision(fact, candidates)
            verdict = Verdict(enforce(decision, fact, target), target)
            apply_decision(self.memories, verdict, fact, payload)
            r.decisions[verdict.decision.value] += 1

    def _reconcile_batch(
        self, llm: LLMClient, facts: list[Fact], payload: dict[str, Any], r: Report, screen: bool
    ) -> None:
        """The LLM path: slot guard and empty neighbourhoods first, one call for the rest."""
        vectors = self.memories.embed([f.content for f in facts]) if facts else None
        kept: list[tuple[Fact, npt.NDArray[np.float32], list[Candidate]]] = []
        for i, fact in enumerate(facts):
            assert vectors is not None
            candidates = self._screen(fact, vectors[i], r.counts, screen)
            if candidates is not None:
                kept.append((fact, vectors[i], candidates))
        verdicts: list[Verdict | None] = [None] * len(kept)
        ask: list[int] = []
        for i, (fact, _, candidates) in enumerate(kept):
            guarded = slot_guard(fact, candidates)
            if guarded is not None:
                verdicts[i] = Verdict(*guarded)
                r.counts["slot_guarded"] += 1
            elif not candidates:
                verdicts[i] = Verdict(Decision.CREATE)  # nothing to compare with: no call
            else:
                ask.append(i)
        if ask:
            try:
                answered = reconcile_with_llm(
                    llm, [kept[i][0] for i in ask], [kept[i][2] for i in ask], r.usage
                )
            except LLMError as exc:
                r.failed("reconciliation", exc)
                answered = [None] * len(ask)
            for i, verdict in zip(ask, answered, strict=True):
                verdicts[i] = verdict
        r.reconciler = LLM_FAILED if r.llm_errors else (LLM if ask else RULES)
        retired: set[str] = set()
        created: list[npt.NDArray[np.float32]] = []
        for (fact, vector, candidates), verdict in zip(kept, verdicts, strict=True):
            if verdict is None:  # the model left it out, or failed: the rules decide
                verdict = Verdict(*rule_decision(fact, candidates))
            verdict.decision = enforce(verdict.decision, fact, verdict.target)
            self._guard_batch(verdict, vector, retired, created)
            made = apply_decision(self.memories, verdict, fact, payload)
            if verdict.target is not None and verdict.decision in RETIRING:
                retired.add(verdict.target.id)
            if made is not None:
                created.append(vector / (np.linalg.norm(vector) or 1.0))
            r.decisions[verdict.decision.value] += 1

    @staticmethod
    def _guard_batch(
        verdict: Verdict,
        vector: npt.NDArray[np.float32],
        retired: set[str],
        created: list[npt.NDArray[np.float32]],
    ) -> None:
        """What the batch itself changed since the candidates were gathered."""
        retargeted = verdict.target is not None and verdict.target.id in retired
        if retargeted and verdict.decision in RETIRING:
            verdict.decision, verdict.target = Decision.CREATE, None
        unit = vector / (np.linalg.norm(vector) or 1.0)
        if verdict.decision is Decision.CREATE and any(
            float(v @ unit) >= DUPLICATE_SIMILARITY for v in created
        ):
            verdict.decision = Decision.SKIP  # the batch said it twice

    def _screen(
        self, fact: Fact, vector: npt.NDArray[np.float32], counts: Counter[str], screen: bool
    ) -> list[Candidate] | None:
        """Noise filter and admission; the fact's candidates when it passes both."""
        if not screen:
            return existing_for(self.memories, fact, vector)
        if self.noise.check(fact.content, vector) is not None:
            counts["noise"] += 1
            return None
        candidates = existing_for(self.memories, fact, vector)
        novelty = 1.0 - max((c.similarity for c in candidates), default=0.0)
        gate = admit(fact.category, fact.importance, fact.confidence, max(novelty, 0.0))
        if not gate.admitted:
            counts["rejected"] += 1
            return None
        return candidates


def smart_ingest_for(engine: Engine, task: dict[str, Any]) -> SmartIngest:
    """The slow path for a task's tenant and space, with its learned noise and the LLM."""
    learned = engine.store.learned_noise(task["space_id"], MAX_LEARNED_NOISE)
    return SmartIngest(
        TenantMemories(engine, task["tenant_id"]),
        engine.noise_filter(learned),
        create_llm(engine.settings),  # None without an LLM configured: rules only
    )


def start_smart_worker(engine: Engine) -> TaskWorker:
    """The process's worker that runs smart-ingest tasks (resuming unfinished ones first)."""
    return engine.start_worker(lambda task: smart_ingest_for(engine, task).run(task["payload"]))
