"""The last step of the slow path: one reconciler decision, applied to the store.

Nothing is destroyed. MERGE keeps the previous content in the memory's
history and combines; SUPERSEDE keeps the old memory, invalidated, with
``valid_to`` at the time the new value was said, so ``as_of`` before the
change still finds it. A change said earlier than the value it would
replace (an old chat imported late) does not overturn the newer value: it
is stored as the history it is, already superseded by it.

A superseded value lives on in the raw turns that said it ("user: I live in
Berlin"), which stay searchable because nothing said is ever hidden. Those
turns are marked with the memory that replaced their fact
(``superseded_by``), so search ranks them below it and an injected context
can say they are outdated (:mod:`memoryd.retrieve.config`).
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from memoryd.ingest.reconcile import (
    SLOT_MARK_PREFIX,
    SUPPORT_CONFIDENCE_STEP,
    Decision,
    Fact,
    merged_text,
    slot_value,
)
from memoryd.ingest.reconcile_llm import Verdict
from memoryd.models import MAX_L0_CHARS, Memory, MemoryType, Relation, RelationType, utcnow
from memoryd.store import MemoryFilter
from memoryd.tenancy.sharing import Sharing
from memoryd.text.conversation import context_of, spoken_by_user

if TYPE_CHECKING:
    from memoryd.ingest.memories import TenantMemories

SMART_SOURCE = "smart-ingest"
CREATING = {
    Decision.SUPERSEDE: RelationType.SUPERSEDES,
    Decision.CONTEXTUALIZE: RelationType.CONTEXTUALIZES,
    Decision.CONTRADICT: RelationType.CONTRADICTS,
}
# the turns of one conversation read back to find those that said a superseded value
MAX_SESSION_TURNS = 1000


def fact_tags(fact: Fact, payload: dict[str, Any]) -> list[str]:
    """The tags a fact's memory carries: its own (a topic) and the request's."""
    return list(dict.fromkeys([*fact.tags, *(payload.get("tags") or [])]))


def fact_marks(fact: Fact, slot: str | None = None) -> list[str]:
    """The marks a fact's memory carries: its slot, value and polarity.

    ``slot`` replaces the fact's own where a change named the memory it
    replaces in another slot ("stopped using Todoist and moved everything to
    Notion": Notion takes the slot Todoist held).
    """
    own = fact.slot_marks()
    if slot is not None and fact.slot != slot:
        own = [SLOT_MARK_PREFIX + slot] + [t for t in own if not t.startswith(SLOT_MARK_PREFIX)]
    return own


def apply_decision(
    mine: TenantMemories, verdict: Verdict, fact: Fact, payload: dict[str, Any]
) -> Memory | None:
    """Apply one decision; the memory it created, if any."""
    decision, target = verdict.decision, verdict.target
    if decision is Decision.SKIP:
        return None
    if decision is Decision.SUPPORT and target is not None:
        mine.update(target.id, confidence=min(1.0, target.confidence + SUPPORT_CONFIDENCE_STEP))
        return None
    if decision is Decision.MERGE and target is not None:
        merged = verdict.merged_content or merged_text(target.content, fact.content)
        # a target with a slot keeps it: the merged words still fill that slot
        has_slot = any(t.startswith(SLOT_MARK_PREFIX) for t in target.marks)
        marks = target.marks if has_slot else [*target.marks, *fact_marks(fact)]
        mine.update(
            target.id,
            content=merged,
            tags=list(dict.fromkeys([*target.tags, *fact_tags(fact, payload)])),
            marks=list(dict.fromkeys(marks)),
            l0_abstract=merged[:MAX_L0_CHARS],
        )
        return None
    if decision is Decision.SUPERSEDE and target is not None and not _same_saying(fact, target):
        return _supersede(mine, verdict, fact, target, payload)
    created = _create(mine, verdict, fact, payload, fact_marks(fact))
    if target is not None and decision is Decision.CONTRADICT:
        back = Relation(relation_type=RelationType.CONTRADICTS, target_id=created.id)
        mine.update(target.id, relations=[*target.relations, back])
    return created


def _create(
    mine: TenantMemories,
    verdict: Verdict,
    fact: Fact,
    payload: dict[str, Any],
    marks: list[str],
    relations: list[Relation] | None = None,
) -> Memory:
    relation = CREATING.get(verdict.decision)
    if relations is None:
        relations = []
        if relation is not None and verdict.target is not None:
            label = verdict.context_label
            relations = [Relation(relation_type=relation, target_id=verdict.target.id,
                                  context_label=label)]  # fmt: skip
    created = mine.add(
        fact.content,
        memory_type=MemoryType.INSIGHT,
        category=fact.category,
        tags=fact_tags(fact, payload),
        marks=marks,
        source=payload.get("source") or SMART_SOURCE,
        agent_id=payload.get("agent_id"),
        session_id=payload.get("session_id"),
        importance=fact.importance,
        confidence=fact.confidence,
        l0_abstract=fact.l0_abstract,
        l1_overview=fact.l1_overview,
        l2_content=fact.l2_content or None,
        relations=relations,
        valid_from=fact.valid_from,
    )
    Sharing(mine).apply_auto_share(created)  # rules watching this space, as for direct creates
    return created


def _supersede(
    mine: TenantMemories, verdict: Verdict, fact: Fact, target: Memory, payload: dict[str, Any]
) -> Memory:
    """The new value replaces the target, or, said before it, becomes its history."""
    slot = slot_value(target)[0] if fact.old_value is not None else None
    marks = fact_marks(fact, slot)
    if fact.valid_from is not None and fact.valid_from < target.said_at:
        # said before the value it would replace: history, already superseded by it
        created = _create(mine, verdict, fact, payload, marks, relations=[])
        mine.update(
            created.id, invalidated_at=utcnow(), superseded_by=target.id, valid_to=target.said_at
        )
        retire_turns(mine, created, target, target.said_at)
        return created
    created = _create(mine, verdict, fact, payload, marks)
    retire(mine, target, created, fact.valid_from)
    return created


def _same_saying(fact: Fact, target: Memory) -> bool:
    """``target`` was distilled from the same message as ``fact``: two readings of one
    statement ("I started eating meat again, I am no longer vegetarian") both stand."""
    return (
        fact.session_id is not None
        and target.session_id == fact.session_id
        and fact.valid_from is not None
        and target.valid_from == fact.valid_from
    )


def retire(mine: TenantMemories, old: Memory, new: Memory, said_at: datetime | None) -> None:
    """``new`` replaces ``old``: invalidate it, end its validity when the change was said
    (now, where not known), and mark the turns that stated it."""
    now = utcnow()
    ends = said_at if said_at is not None and said_at > old.said_at else now
    mine.update(old.id, invalidated_at=now, superseded_by=new.id, valid_to=ends)
    retire_turns(mine, old, new, ends)


def retire_turns(mine: TenantMemories, old: Memory, new: Memory, ends: datetime) -> int:
    """Retire the raw turns that said ``old``'s value, as ``old`` is: replaced by ``new``.

    Those are the turns of ``old``'s conversation that hold the sentence it
    was distilled from, the replies to them, and the turns an earlier change
    already pointed at ``old``. Like the fact they said, they are no longer
    current (``Memory.status_at``): search and every injection leave them out,
    while ``as_of`` before ``ends`` (when the change was said), the session's
    transcript and history still find them. Nothing said is deleted.
    """
    store, turns = mine.store, MemoryType.SESSION
    stale: dict[str, Memory] = {}
    said = " ".join(old.l1_overview.split())
    if old.session_id and said:
        rows, _ = store.list_memories(
            mine.tenant_id,
            [mine.space_id],
            MemoryFilter(session_id=old.session_id, memory_type=[turns]),
            limit=MAX_SESSION_TURNS,
        )
        stating = [t for t in rows if said in " ".join(t.content.split())]
        # the reply to such a turn is about the old value too ("Toronto is a great city."):
        # it was embedded with the turn before it as its context
        contexts = {context_of(t.content) for t in stating}
        replies = [t for t in rows if t.l1_overview in contexts and not spoken_by_user(t)]
        stale |= {t.id: t for t in stating + replies}
    pointed, _ = store.list_memories(
        mine.tenant_id,
        [mine.space_id],
        MemoryFilter(superseded_by=old.id, memory_type=[turns]),
        limit=MAX_SESSION_TURNS,
    )
    stale |= {t.id: t for t in pointed}
    now = utcnow()
    for turn in stale.values():
        # a turn re-pointed by a later change keeps the end of its first validity
        valid_to = turn.valid_to if turn.valid_to is not None and turn.valid_to < ends else ends
        mine.update(turn.id, superseded_by=new.id, invalidated_at=now, valid_to=valid_to)
    return len(stale)
