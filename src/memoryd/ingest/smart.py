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
from typing import Any

import numpy as np
import numpy.typing as npt

from memoryd.ingest import rules
from memoryd.ingest.admission import admit
from memoryd.ingest.extract_llm import extract_with_llm
from memoryd.ingest.noise import NoiseFilter
from memoryd.ingest.reconcile import (
    DUPLICATE_SIMILARITY,
    MAX_EXISTING,
    MAX_PER_FACT,
    MIN_SIMILARITY,
    SUPPORT_CONFIDENCE_STEP,
    Candidate,
    Decision,
    Fact,
    enforce,
    rule_decision,
    slot_guard,
)
from memoryd.ingest.reconcile_llm import Verdict, reconcile_with_llm
from memoryd.ingest.select import select_messages
from memoryd.llm import LLMClient, LLMError, Usage
from memoryd.models import Memory, MemoryType, Relation, RelationType, utcnow
from memoryd.service import MemoryService
from memoryd.store import MemoryFilter
from memoryd.tenancy.sharing import Sharing

SMART_SOURCE = "smart-ingest"
# how sure a rule match is that it found a durable fact (an LLM says so per fact)
RULE_CONFIDENCE = 0.7
EXTRACTED_TYPES = (MemoryType.INSIGHT, MemoryType.PINNED)
RULES, LLM, LLM_FAILED = "rules", "llm", "rules (llm failed)"
# decisions that leave the target memory behind: a later fact must not change it again
RETIRING = frozenset((Decision.MERGE, Decision.SUPERSEDE))
CREATING = {
    Decision.SUPERSEDE: RelationType.SUPERSEDES,
    Decision.CONTEXTUALIZE: RelationType.CONTEXTUALIZES,
    Decision.CONTRADICT: RelationType.CONTRADICTS,
}


def facts_from_rules(messages: list[tuple[str, str]]) -> list[Fact]:
    """Facts by the rule families (no LLM): the user's own sentences, with slots."""
    return [
        Fact(
            content=f.content,
            category=f.category,
            l0_abstract=f.l0_abstract,
            l1_overview=f.l1_overview,
            l2_content=f.l2_content,
            tags=list(f.tags),
            importance=f.importance,
            confidence=RULE_CONFIDENCE,
            slot=f.slot,
            value=f.value,
            negative=f.negative,
            change=f.change,
            exclusive=f.exclusive,
        )
        for f in rules.extract_facts(messages)
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
        self, service: MemoryService, noise: NoiseFilter, llm: LLMClient | None = None
    ) -> None:
        self.service = service
        self.store = service.store
        self.noise = noise
        self.llm = llm

    # ------------------------------------------------------------------ the task
    def run(self, payload: dict[str, Any]) -> dict[str, Any]:
        messages = [(m["role"], m["content"]) for m in payload.get("messages", [])]
        selected = select_messages(messages)
        report = Report()
        facts = self._extract(selected, report)
        return {"messages_selected": len(selected), **self.reconcile(facts, payload, report)}

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

    def _extract(self, selected: list[tuple[str, str]], report: Report) -> list[Fact]:
        if self.llm is None:
            return facts_from_rules(selected)
        try:
            facts = extract_with_llm(self.llm, selected, report.usage)
        except LLMError as exc:
            report.failed("extraction", exc)
            report.extractor = LLM_FAILED
            return facts_from_rules(selected)
        report.extractor = LLM
        return facts

    # ------------------------------------------------------------------ reconciliation
    def _reconcile_one_by_one(
        self, facts: list[Fact], payload: dict[str, Any], r: Report, screen: bool
    ) -> None:
        """The rule path: each fact sees what the facts before it wrote."""
        vectors = self.service.embed([f.content for f in facts]) if facts else None
        for i, fact in enumerate(facts):
            assert vectors is not None
            candidates = self._screen(fact, vectors[i], r.counts, screen)
            if candidates is None:
                continue
            decision, target = rule_decision(fact, candidates)
            verdict = Verdict(enforce(decision, fact, target), target)
            self._execute(verdict, fact, vectors[i], payload)
            r.decisions[verdict.decision.value] += 1

    def _reconcile_batch(
        self, llm: LLMClient, facts: list[Fact], payload: dict[str, Any], r: Report, screen: bool
    ) -> None:
        """The LLM path: slot guard and empty neighbourhoods first, one call for the rest."""
        vectors = self.service.embed([f.content for f in facts]) if facts else None
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
            made = self._execute(verdict, fact, vector, payload)
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
            return self._candidates(fact, vector)
        if self.noise.check(fact.content, vector) is not None:
            counts["noise"] += 1
            return None
        candidates = self._candidates(fact, vector)
        novelty = 1.0 - max((c.similarity for c in candidates), default=0.0)
        gate = admit(fact.category, fact.importance, fact.confidence, max(novelty, 0.0))
        if not gate.admitted:
            counts["rejected"] += 1
            return None
        return candidates

    # ------------------------------------------------------------------ existing memories
    def _candidates(self, fact: Fact, vector: npt.NDArray[np.float32]) -> list[Candidate]:
        """Dual search (vector + keywords) among extracted and pinned memories, plus the slot."""
        svc, store = self.service, self.store
        live = MemoryFilter(memory_type=list(EXTRACTED_TYPES), live_at=utcnow())
        rowids = [
            r
            for r, _ in store.vector_search(svc.tenant_id, svc.space_id, vector, MAX_PER_FACT, live)
        ]
        rowids += [
            r
            for r, _ in store.bm25_search(
                svc.tenant_id, svc.space_id, fact.content, MAX_PER_FACT, live
            )
        ]
        found = list(store.by_rowids(list(dict.fromkeys(rowids))).values())
        if fact.slot_tag is not None:
            same_slot, _ = store.list_memories(
                svc.tenant_id,
                [svc.space_id],
                MemoryFilter(
                    tags=[fact.slot_tag], live_at=utcnow(), memory_type=list(EXTRACTED_TYPES)
                ),
                limit=MAX_PER_FACT,
            )
            slot_ids = {m.id for m in same_slot}
            found = same_slot + [m for m in found if m.id not in slot_ids]
        found = found[:MAX_EXISTING]
        out = []
        unit = vector / (np.linalg.norm(vector) or 1.0)
        stored_vectors = store.vectors_of([m.id for m in found]) if found else {}
        for memory in found:
            stored = stored_vectors.get(memory.id)
            similarity = 0.0 if stored is None else float(stored @ unit)
            in_slot = fact.slot_tag is not None and fact.slot_tag in memory.tags
            if similarity >= MIN_SIMILARITY or in_slot:
                out.append(Candidate(memory, similarity))
        return out

    # ------------------------------------------------------------------ decisions
    def _execute(
        self, verdict: Verdict, fact: Fact, vector: npt.NDArray[np.float32], payload: dict[str, Any]
    ) -> Memory | None:
        """Apply one decision to the store; the memory it created, if any.

        Nothing is destroyed: MERGE keeps the previous content in the
        memory's history, SUPERSEDE keeps the old memory, invalidated.
        """
        svc, decision, target = self.service, verdict.decision, verdict.target
        if decision is Decision.SKIP:
            return None
        if decision is Decision.SUPPORT and target is not None:
            svc.update(target.id, confidence=min(1.0, target.confidence + SUPPORT_CONFIDENCE_STEP))
            return None
        if decision is Decision.MERGE and target is not None:
            merged = verdict.merged_content
            svc.update(
                target.id,
                content=merged or fact.content,
                tags=self._tags(fact, payload),
                l0_abstract=merged[: rules.MAX_L0_CHARS] if merged else fact.l0_abstract,
            )
            return None
        relation = CREATING.get(decision)
        relations = (
            []
            if relation is None or target is None
            else [
                Relation(
                    relation_type=relation, target_id=target.id, context_label=verdict.context_label
                )
            ]
        )
        created = svc.add(
            fact.content,
            memory_type=MemoryType.INSIGHT,
            category=fact.category,
            tags=self._tags(fact, payload),
            source=payload.get("source") or SMART_SOURCE,
            agent_id=payload.get("agent_id"),
            session_id=payload.get("session_id"),
            importance=fact.importance,
            confidence=fact.confidence,
            l0_abstract=fact.l0_abstract,
            l1_overview=fact.l1_overview,
            l2_content=fact.l2_content or None,
            relations=relations,
        )
        Sharing(svc).apply_auto_share(created)  # rules watching this space, as for direct creates
        if target is None:
            return created
        if decision is Decision.SUPERSEDE:
            now = utcnow()
            svc.update(target.id, invalidated_at=now, superseded_by=created.id, valid_to=now)
        elif decision is Decision.CONTRADICT:
            back = Relation(relation_type=RelationType.CONTRADICTS, target_id=created.id)
            svc.update(target.id, relations=[*target.relations, back])
        return created

    @staticmethod
    def _tags(fact: Fact, payload: dict[str, Any]) -> list[str]:
        return list(dict.fromkeys([*fact.tags, *(payload.get("tags") or []), *fact.slot_tags()]))
