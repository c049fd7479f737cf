"""The slow path of a conversation ingest, for one task: from stored messages to memories.

select → (privacy, done at capture) → extract → noise → admission → reconcile,
one fact at a time, so a later fact of the same conversation reconciles
against what an earlier one just wrote (the batch deduplicates itself).
Every fact is counted by what happened to it; none disappears unrecorded.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np
import numpy.typing as npt

from memoryd.ingest import rules
from memoryd.ingest.admission import admit
from memoryd.ingest.noise import NoiseFilter
from memoryd.ingest.reconcile import (
    MAX_EXISTING,
    MAX_PER_FACT,
    MIN_SIMILARITY,
    SUPPORT_CONFIDENCE_STEP,
    Candidate,
    Decision,
    Fact,
    enforce,
    rule_decision,
)
from memoryd.ingest.select import select_messages
from memoryd.models import Memory, MemoryType, Relation, RelationType, utcnow
from memoryd.service import MemoryService
from memoryd.store import MemoryFilter

SMART_SOURCE = "smart-ingest"
# how sure a rule match is that it found a durable fact (an LLM says so per fact)
RULE_CONFIDENCE = 0.7
EXTRACTED_TYPES = (MemoryType.INSIGHT, MemoryType.PINNED)


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


class SmartIngest:
    def __init__(self, service: MemoryService, noise: NoiseFilter) -> None:
        self.service = service
        self.store = service.store
        self.noise = noise

    # ------------------------------------------------------------------ the task
    def run(self, payload: dict[str, Any]) -> dict[str, Any]:
        messages = [(m["role"], m["content"]) for m in payload.get("messages", [])]
        selected = select_messages(messages)
        facts = facts_from_rules(selected)
        counts: Counter[str] = Counter()
        decisions: Counter[str] = Counter()
        vectors = self.service.embed([f.content for f in facts]) if facts else None
        for i, fact in enumerate(facts):
            assert vectors is not None
            vector = vectors[i]
            noise = self.noise.check(fact.content, vector)
            if noise is not None:
                counts["noise"] += 1
                continue
            candidates = self._candidates(fact, vector)
            novelty = 1.0 - max((c.similarity for c in candidates), default=0.0)
            gate = admit(fact.category, fact.importance, fact.confidence, max(novelty, 0.0))
            if not gate.admitted:
                counts["rejected"] += 1
                continue
            decision, target = rule_decision(fact, candidates)
            decision = enforce(decision, fact, target)
            self._execute(decision, fact, vector, target, payload)
            decisions[decision.value] += 1
        return {
            "messages_selected": len(selected),
            "facts_extracted": len(facts),
            "facts_noise": counts["noise"],
            "facts_rejected": counts["rejected"],
            "decisions": dict(decisions),
            "extractor": "rules",
        }

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
            found = same_slot + [m for m in found if m.id not in {s.id for s in same_slot}]
        out = []
        unit = vector / (np.linalg.norm(vector) or 1.0)
        for memory in found[:MAX_EXISTING]:
            stored = store.get_vector(memory.id)
            similarity = 0.0 if stored is None else float(stored @ unit)
            in_slot = fact.slot_tag is not None and fact.slot_tag in memory.tags
            if similarity >= MIN_SIMILARITY or in_slot:
                out.append(Candidate(memory, similarity))
        return out

    # ------------------------------------------------------------------ decisions
    def _execute(
        self,
        decision: Decision,
        fact: Fact,
        vector: npt.NDArray[np.float32],
        target: Memory | None,
        payload: dict[str, Any],
    ) -> None:
        svc = self.service
        if decision is Decision.SKIP:
            return
        if decision is Decision.SUPPORT and target is not None:
            svc.update(target.id, confidence=min(1.0, target.confidence + SUPPORT_CONFIDENCE_STEP))
            return
        if decision is Decision.MERGE and target is not None:
            svc.update(
                target.id,
                content=fact.content,
                tags=self._tags(fact, payload),
                l0_abstract=fact.l0_abstract,
            )
            return
        relation = {
            Decision.SUPERSEDE: RelationType.SUPERSEDES,
            Decision.CONTEXTUALIZE: RelationType.CONTEXTUALIZES,
            Decision.CONTRADICT: RelationType.CONTRADICTS,
        }.get(decision)
        relations = (
            []
            if relation is None or target is None
            else [Relation(relation_type=relation, target_id=target.id)]
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
        if target is None:
            return
        if decision is Decision.SUPERSEDE:
            now = utcnow()
            svc.update(target.id, invalidated_at=now, superseded_by=created.id, valid_to=now)
        elif decision is Decision.CONTRADICT:
            back = Relation(relation_type=RelationType.CONTRADICTS, target_id=created.id)
            svc.update(target.id, relations=[*target.relations, back])

    @staticmethod
    def _tags(fact: Fact, payload: dict[str, Any]) -> list[str]:
        return list(dict.fromkeys([*fact.tags, *(payload.get("tags") or []), *fact.slot_tags()]))
