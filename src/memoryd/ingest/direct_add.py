"""A direct memory (seed 000 §1.3), stored: a repeat, a new value of a key, or a change.

What the caller says is stored as it is, pinned, but not blindly beside
what is known:

* content a direct memory already holds is a repeat: that memory is
  returned, recalled once more, instead of a twin;
* with ``key``, the new value supersedes the memory holding that key;
* a memory that changes a known fact supersedes it (the memory named by
  ``replaces``, or the current holder of the slot its words fill: "I live
  in Munich" after "I live in Berlin"), with the same rules and effects as
  smart ingest's (:mod:`memoryd.ingest.slots`, :func:`apply.retire`).

Every supersede keeps the old memory, invalidated, for ``as_of``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from memoryd.errors import ForbiddenError, ValidationError
from memoryd.ingest import attributes, rules
from memoryd.ingest.apply import retire
from memoryd.ingest.direct import INHERITED_FIELDS, UPSERT_FIELDS
from memoryd.ingest.neighbours import existing_for
from memoryd.ingest.reconcile import Decision, Fact, slot_guard
from memoryd.models import (
    Memory,
    MemoryType,
    Relation,
    RelationType,
    State,
    utcnow,
)
from memoryd.store import MemoryFilter
from memoryd.store.rows import to_us

if TYPE_CHECKING:
    from memoryd.ingest.memories import TenantMemories

# nearest neighbours of a new direct memory checked for the same content (same text, same vector)
REPEAT_PROBE = 8


def add_direct(
    mine: TenantMemories,
    memory: Memory,
    fields: dict[str, Any],
    key: str | None,
    replaces: str | None,
) -> Memory:
    """Store ``memory`` (built from ``fields``) by the rules of the module docstring."""
    if replaces is not None and (key or memory.memory_type is not MemoryType.PINNED):
        raise ValidationError("replaces applies to a direct memory without a key")
    vector = mine.embed([memory.content])[0]
    if key:
        current = slot_holder(mine, key)
    elif memory.memory_type is MemoryType.PINNED and replaces is None:
        current = same_content(mine, memory, vector)  # a direct add, not a distilled fact
    else:
        current = None
    if current is not None and current.content == memory.content:
        if key:  # the slot's value again: other fields given are still changes
            given = {k: getattr(memory, k) for k in UPSERT_FIELDS if fields.get(k) is not None}
            current = mine.update(current.id, **given)
        elif any(t not in current.tags for t in memory.tags):  # a repeat's new tags join
            current = mine.update(current.id, tags=list(dict.fromkeys(current.tags + memory.tags)))
        mine.store.touch([current.id], to_us(utcnow()) or 0)
        return mine.get(current.id)
    if fields.get("category") is None and memory.memory_type is MemoryType.PINNED:
        # no category given: the one its content implies ("I live in Oslo" is profile)
        implied = rules.implied_category(memory.content)
        if implied is not None:
            memory = memory.model_copy(update={"category": implied})
    if key and current is not None:
        kept = {k: getattr(current, k) for k in INHERITED_FIELDS if fields.get(k) is None}
        supersedes = Relation(relation_type=RelationType.SUPERSEDES, target_id=current.id)
        memory = memory.model_copy(update={**kept, "relations": [*memory.relations, supersedes]})
        return mine.store.supersede(current, memory, vector, actor=memory.agent_id)
    old = mine.get(replaces) if replaces is not None else None
    if old is not None and fields.get("category") is None:  # a new value of the same fact
        memory = memory.model_copy(update={"category": old.category})
    return store_direct(mine, memory, vector, old)


def slot_holder(mine: TenantMemories, key: str) -> Memory | None:
    """The memory that holds ``key`` (the latest value of the slot): one at most, whether
    it holds now, from a future date or no longer (expired), since a memory superseded
    hands its key on; only a deleted one lets it go."""
    found, _ = mine.store.list_memories(
        mine.tenant_id, [mine.space_id], MemoryFilter(key=key), limit=1
    )
    holder = found[0] if found else None
    if holder is not None and mine.viewer is not None:
        seen = mine.store.get(mine.tenant_id, [mine.space_id], holder.id, mine.viewer)
        if seen is None:
            raise ForbiddenError(
                f"key {key!r} is held by a memory of a scope this agent cannot see"
            )
    return holder


def same_content(
    mine: TenantMemories, memory: Memory, vector: npt.NDArray[np.float32]
) -> Memory | None:
    """A live direct memory with exactly this content, found by its (identical) vector."""
    now = utcnow()
    # a repeat is the same content in the same scope: another agent's twin is not this one
    rowids = mine.store.vector_search(
        mine.tenant_id, mine.space_id, vector, REPEAT_PROBE, MemoryFilter(live_at=now)
    )
    for candidate in mine.store.by_rowids([r for r, _ in rowids]).values():
        if (
            candidate.content == memory.content
            and candidate.scope == memory.scope
            and candidate.memory_type is MemoryType.PINNED
            and candidate.state is State.ACTIVE
            and candidate.is_live(now)
        ):
            return candidate
    return None


def store_direct(
    mine: TenantMemories, memory: Memory, vector: npt.NDArray[np.float32], old: Memory | None
) -> Memory:
    """Store a direct memory; it supersedes ``old``, or the fact its words change."""
    if old is None and memory.memory_type is MemoryType.PINNED:
        old = replaced_by_direct(mine, memory, vector)
    if old is not None:
        if old.space_id != mine.space_id or old.invalidated_at is not None:
            raise ValidationError(f"memory {old.id} is not a current memory of this space")
        if said_before(memory, old):  # an old value arriving late: the history it is
            mine.store.insert_memories([memory], [vector], actor=memory.agent_id)
            retire(mine, memory, old, old.said_at)
            return mine.get(memory.id)
        link = Relation(relation_type=RelationType.SUPERSEDES, target_id=old.id)
        memory.relations = [*memory.relations, link]
    reading = None
    if memory.memory_type is MemoryType.PINNED and not memory.key:
        # what the statement is about, by meaning: a newer value of it retires the older
        reading = attributes.read([memory.content], mine)[0]
        memory.marks = [*memory.marks, *reading.marks()]
    mine.store.insert_memories([memory], [vector], actor=memory.agent_id)
    if old is not None:
        retire(mine, old, memory, memory.valid_from)
    elif reading is not None:
        attributes.retire_replaced(mine, memory, reading)
    return mine.get(memory.id)


def said_before(new: Memory, old: Memory) -> bool:
    """``new`` tells of a time before ``old`` held: it cannot replace it."""
    return new.valid_from is not None and new.valid_from < old.said_at


def replaced_by_direct(
    mine: TenantMemories, memory: Memory, vector: npt.NDArray[np.float32]
) -> Memory | None:
    """The memory a direct add changes: the current holder of the slot its words fill.

    "I live in Munich" added after "I live in Berlin" (stored directly or
    distilled) is a change, not a second answer to where the user lives.
    Content the rules cannot place replaces nothing (``replaces`` says it).
    """
    found = [f for f in rules.extract_facts([("user", memory.content)]) if f.slot is not None]
    replaced: dict[str, Memory] = {}
    for extracted in found:  # "no longer X, now Y" is two readings of one change
        fact = Fact.from_rules(extracted, memory.confidence)
        decided = slot_guard(fact, existing_for(mine, fact, vector))
        # a fact changes the facts of its own scope only: an agent's note leaves global ones be
        if (
            decided is not None
            and decided[0] is Decision.SUPERSEDE
            and decided[1].scope == memory.scope
        ):
            replaced[decided[1].id] = decided[1]
    return next(iter(replaced.values())) if len(replaced) == 1 else None
