"""The existing memories a new fact is compared with (seed 000 §1.4, ``gather_existing``).

Dual search among the live distilled and pinned memories, ``MAX_PER_FACT``
from each leg: the fact's vector and its words. Then what the slot rules
need beyond similarity: the memories that hold the fact's slot (by their
slot tag, a liking and a use of one topic counting as one slot), and the
memory holding the value a change names ("from MySQL to Postgres" finds
what says MySQL, however unlike the new sentence it reads). A candidate
from the search legs is kept from ``MIN_SIMILARITY`` cosine; one of the
slot is kept whatever its cosine.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from memoryd.ingest import slots
from memoryd.ingest.reconcile import (
    MAX_EXISTING,
    MAX_PER_FACT,
    MIN_SIMILARITY,
    SLOT_MARK_PREFIX,
    Candidate,
    Fact,
    slot_value,
)
from memoryd.models import Memory, MemoryType, utcnow
from memoryd.store import MemoryFilter

if TYPE_CHECKING:
    from memoryd.ingest.memories import TenantMemories

EXTRACTED_TYPES = (MemoryType.INSIGHT, MemoryType.PINNED)


def slot_marks(slot: str) -> list[str]:
    """The marks a memory of this slot may carry (both families of a thing's topic)."""
    family, _, topic = slot.partition(":")
    if family in slots.THING_FAMILIES and topic:
        return [f"{SLOT_MARK_PREFIX}{f}:{topic}" for f in sorted(slots.THING_FAMILIES)]
    return [SLOT_MARK_PREFIX + slot]


def existing_for(
    mine: TenantMemories, fact: Fact, vector: npt.NDArray[np.float32]
) -> list[Candidate]:
    """The fact's candidates, its slot's first, at most ``MAX_EXISTING``."""
    store, tenant, space = mine.store, mine.tenant_id, mine.space_id
    live = MemoryFilter(memory_type=list(EXTRACTED_TYPES), live_at=utcnow())
    rowids = [r for r, _ in store.vector_search(tenant, space, vector, MAX_PER_FACT, live)]
    rowids += [r for r, _ in store.bm25_search(tenant, space, fact.content, MAX_PER_FACT, live)]
    if fact.old_value:
        rowids += [r for r, _ in store.bm25_search(tenant, space, fact.old_value, 3, live)]
    found = list(store.by_rowids(list(dict.fromkeys(rowids))).values())
    same_slot: list[Memory] = []
    for mark in slot_marks(fact.slot) if fact.slot else []:
        rows, _ = store.list_memories(
            tenant,
            [space],
            MemoryFilter(marks=[mark], live_at=utcnow(), memory_type=list(EXTRACTED_TYPES)),
            limit=MAX_PER_FACT,
        )
        same_slot += rows
    seen = {m.id for m in same_slot}
    found = (same_slot + [m for m in found if m.id not in seen])[:MAX_EXISTING]
    unit = vector / (np.linalg.norm(vector) or 1.0)
    stored = store.vectors_of([m.id for m in found]) if found else {}
    out = []
    for memory in found:
        vec = stored.get(memory.id)
        similarity = 0.0 if vec is None else float(vec @ unit)
        held = slot_value(memory)
        in_slot = slots.same_slot(fact.slot, held[0]) or (
            fact.old_value is not None and slots.related(fact.old_value, held[1])
        )
        if similarity >= MIN_SIMILARITY or in_slot:
            out.append(Candidate(memory, similarity))
    return out
