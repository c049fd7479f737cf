"""Stage 6 of the slow path: what a new fact does to what is already known (seed 000 §1.4).

Seven decisions. Without an LLM they come from rules: the same slot with
the same value is a repeat (SUPPORT: the memory gains confidence, nothing
new is stored), the same slot with a new value SUPERSEDEs the old memory,
a near-duplicate is SKIPped (or SUPPORTs a close one), anything else is
CREATEd. Whoever decided, the category rules and pinned protection of the
seed have the last word (``enforce``).

Nothing is destroyed: SUPERSEDE keeps the old memory, invalidated and with
``valid_to`` set, so ``as_of`` still finds it; MERGE keeps the previous
content in the memory's history.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from memoryd.models import Category, Memory, MemoryType

# candidates per fact from each search leg, all facts together, and their floor (seed 000)
MAX_PER_FACT = 5
MAX_EXISTING = 60
MIN_SIMILARITY = 0.3
# rule decisions: cosine at which a fact restates a memory (SKIP) or backs it (SUPPORT)
DUPLICATE_SIMILARITY = 0.95
SUPPORT_SIMILARITY = 0.88
SUPPORT_CONFIDENCE_STEP = 0.1
SLOT_TAG_PREFIX = "slot:"
VALUE_TAG_PREFIX = "value:"
NEGATIVE_TAG = "polarity:negative"

# a contradiction in these categories is a change of value over time
TEMPORAL_CATEGORIES = frozenset((Category.PREFERENCES, Category.ENTITIES))
APPEND_ONLY = frozenset((Category.EVENTS, Category.CASES))


class Decision(StrEnum):
    CREATE = "create"
    MERGE = "merge"
    SKIP = "skip"
    SUPERSEDE = "supersede"
    SUPPORT = "support"
    CONTEXTUALIZE = "contextualize"
    CONTRADICT = "contradict"


@dataclass
class Fact:
    """A candidate memory from extraction (rules or an LLM), in the user's language."""

    content: str
    category: Category
    l0_abstract: str = ""
    l1_overview: str = ""
    l2_content: str = ""
    tags: list[str] = field(default_factory=list)
    importance: float = 0.5
    confidence: float = 0.7
    slot: str | None = None
    value: str | None = None
    negative: bool = False  # the value is disliked ("I don't like coffee")
    change: bool = False  # the wording says the value changed ("now", "moved to")
    exclusive: bool = False  # the slot holds one value at a time ("prefer", "lives in")

    @property
    def slot_tag(self) -> str | None:
        return None if self.slot is None else SLOT_TAG_PREFIX + self.slot

    def slot_tags(self) -> list[str]:
        """How a memory remembers its slot, so later facts can find and compare it."""
        if self.slot is None:
            return []
        tags = [SLOT_TAG_PREFIX + self.slot]
        if self.value:
            tags.append(VALUE_TAG_PREFIX + self.value)
        if self.negative:
            tags.append(NEGATIVE_TAG)
        return tags


@dataclass
class Candidate:
    """An existing memory found for a fact, with its cosine to the fact."""

    memory: Memory
    similarity: float


def slot_value(memory: Memory) -> tuple[str | None, str | None, bool]:
    """The slot a memory fills, its value and whether the value is disliked, from its tags."""
    slot = value = None
    for tag in memory.tags:
        if tag.startswith(SLOT_TAG_PREFIX):
            slot = tag[len(SLOT_TAG_PREFIX) :]
        elif tag.startswith(VALUE_TAG_PREFIX):
            value = tag[len(VALUE_TAG_PREFIX) :]
    return slot, value, NEGATIVE_TAG in memory.tags


def _same(a: str | None, b: str | None) -> bool:
    return a is not None and b is not None and a.strip().casefold() == b.strip().casefold()


def slot_decision(fact: Fact, memory: Memory) -> Decision | None:
    """What a fact does to a memory of the same slot, or None when both can hold.

    The same value said the same way is a repeat; the same value with the
    other polarity ("I don't like coffee anymore") replaces it; another value
    replaces it when the fact says it changed or the slot holds one value at
    a time. Disliking one thing never cancels liking another.
    """
    slot, value, negative = slot_value(memory)
    if fact.slot is None or slot != fact.slot:
        return None
    if _same(value, fact.value):
        return Decision.SUPPORT if negative == fact.negative else Decision.SUPERSEDE
    if not fact.negative and (fact.change or fact.exclusive):
        return Decision.SUPERSEDE
    return None


def slot_guard(fact: Fact, candidates: list[Candidate]) -> tuple[Decision, Memory] | None:
    """The slot's decision when a candidate fills the fact's slot, else None.

    With an LLM this is the preference slot guard of seed 000 §1.4: a fact the
    rules can place by its slot ("prefer tea now" against "prefer coffee") is
    decided here, without asking the model, so the model is only asked what
    rules cannot tell.
    """
    for c in candidates:
        decision = slot_decision(fact, c.memory)
        if decision is not None:
            return decision, c.memory
    return None


def rule_decision(fact: Fact, candidates: list[Candidate]) -> tuple[Decision, Memory | None]:
    """The decision without an LLM, and the memory it concerns."""
    guarded = slot_guard(fact, candidates)
    if guarded is not None:
        return guarded
    best = max(candidates, key=lambda c: c.similarity, default=None)
    if best is not None and best.similarity >= DUPLICATE_SIMILARITY:
        return Decision.SKIP, best.memory
    if best is not None and best.similarity >= SUPPORT_SIMILARITY:
        return Decision.SUPPORT, best.memory
    return Decision.CREATE, None


def enforce(decision: Decision, fact: Fact, target: Memory | None) -> Decision:
    """The seed's category rules and pinned protection, over any decision."""
    if target is None:
        return Decision.SKIP if decision is Decision.SKIP else Decision.CREATE
    if decision is Decision.CONTRADICT and fact.category in TEMPORAL_CATEGORIES:
        decision = Decision.SUPERSEDE
    if fact.category is Category.PROFILE and decision in (
        Decision.SUPERSEDE,
        Decision.CONTRADICT,
    ):
        decision = Decision.MERGE  # a profile is one evolving record, never a contradiction
    if fact.category in APPEND_ONLY and decision not in (Decision.CREATE, Decision.SKIP):
        decision = Decision.SKIP if decision is Decision.SUPPORT else Decision.CREATE
    if target.memory_type is MemoryType.PINNED and decision in (
        Decision.MERGE,
        Decision.SUPERSEDE,
    ):
        decision = Decision.CREATE  # what the user pinned is theirs to change
    return decision
