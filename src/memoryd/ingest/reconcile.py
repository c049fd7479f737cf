"""Stage 6 of the slow path: what a new fact does to what is already known (seed 000 §1.4).

Seven decisions. Without an LLM they come from rules: the same slot with
the same value is a repeat (SUPPORT: the memory gains confidence, nothing
new is stored), a change of the slot's value SUPERSEDEs the old memory
(:mod:`memoryd.ingest.slots` says what a change is), a near-duplicate is
SKIPped (or SUPPORTs a close one), anything else is CREATEd. Whoever
decided, the category rules and pinned protection of the seed have the last
word (``enforce``), with one difference: a change of a slot supersedes in
every category, profile included. The seed merges profile facts into one
record; a merge would overwrite "lives in Berlin" with "moved to Porto", and
``as_of`` could no longer say where the user lived before.

Nothing is destroyed: SUPERSEDE keeps the old memory, invalidated and with
``valid_to`` set, so ``as_of`` still finds it; MERGE keeps the previous
content in the memory's history, and combines rather than replaces.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from functools import lru_cache

from memoryd.ingest import slots
from memoryd.ingest.rules import ExtractedFact, extract_facts
from memoryd.models import Category, Memory, MemoryType

# candidates per fact from each search leg, all facts together, and their floor (seed 000)
MAX_PER_FACT = 5
MAX_EXISTING = 60
MIN_SIMILARITY = 0.3
# rule decisions: cosine at which a fact restates a memory (SKIP) or backs it (SUPPORT)
DUPLICATE_SIMILARITY = 0.95
SUPPORT_SIMILARITY = 0.88
SUPPORT_CONFIDENCE_STEP = 0.1
SLOT_MARK_PREFIX = "slot:"
VALUE_MARK_PREFIX = "value:"
NEGATIVE_MARK = "polarity:negative"

# a contradiction in these categories is a change of value over time
SENTENCE_ENDS = (".", "!", "?", "。", "！", "？")
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
    ends: bool = False  # the wording says the value is over ("I left teaching")
    old_value: str | None = None  # the value it replaces, where it names it ("from MySQL")
    valid_from: datetime | None = None  # when it was said, where the conversation says
    session_id: str | None = None  # the conversation it was said in

    @classmethod
    def from_rules(
        cls,
        found: ExtractedFact,
        confidence: float,
        valid_from: datetime | None = None,
        session_id: str | None = None,
    ) -> Fact:
        """A rule extractor's fact, as the reconciler takes it."""
        return cls(
            content=found.content,
            category=found.category,
            l0_abstract=found.l0_abstract,
            l1_overview=found.l1_overview,
            l2_content=found.l2_content,
            tags=list(found.tags),
            importance=found.importance,
            confidence=confidence,
            slot=found.slot,
            value=found.value,
            negative=found.negative,
            change=found.change,
            exclusive=found.exclusive,
            ends=found.ends,
            old_value=found.old_value,
            valid_from=valid_from,
            session_id=session_id,
        )

    def slot_fact(self) -> slots.SlotFact:
        return slots.of(self)

    @property
    def slot_mark(self) -> str | None:
        return None if self.slot is None else SLOT_MARK_PREFIX + self.slot

    def slot_marks(self) -> list[str]:
        """How a memory remembers its slot, so later facts can find and compare it.

        They are marks, not tags: the user never sees them (see ``Memory.marks``).
        """
        if self.slot is None:
            return []
        marks = [SLOT_MARK_PREFIX + self.slot]
        if self.value:
            marks.append(VALUE_MARK_PREFIX + self.value)
        if self.negative:
            marks.append(NEGATIVE_MARK)
        return marks


@dataclass
class Candidate:
    """An existing memory found for a fact, with its cosine to the fact."""

    memory: Memory
    similarity: float


def slot_value(memory: Memory) -> tuple[str | None, str | None, bool]:
    """The slot a memory fills, its value and whether the value is disliked.

    Distilled memories carry them in their marks. A memory stored directly
    ("I live in Berlin", pinned) has none: its slot is what the rules read in
    its words, so a later change can still find what it changes.
    """
    slot = value = None
    for mark in memory.marks:
        if mark.startswith(SLOT_MARK_PREFIX):
            slot = mark[len(SLOT_MARK_PREFIX) :]
        elif mark.startswith(VALUE_MARK_PREFIX):
            value = mark[len(VALUE_MARK_PREFIX) :]
    if slot is None and memory.memory_type is MemoryType.PINNED:
        return slot_of_text(memory.content)
    return slot, value, NEGATIVE_MARK in memory.marks


@lru_cache(maxsize=4096)
def slot_of_text(text: str) -> tuple[str | None, str | None, bool]:
    """The slot of a statement by the user, when it states one fact with a slot."""
    found = [f for f in extract_facts([("user", text)]) if f.slot is not None]
    if len(found) != 1:
        return None, None, False
    return found[0].slot, found[0].value, found[0].negative


def slot_decision(fact: Fact, memory: Memory) -> Decision | None:
    """What a fact does to a memory of its slot, or None when both can hold.

    The rules are :func:`memoryd.ingest.slots.compare`: a repeat SUPPORTs, a
    change SUPERSEDEs, anything else stands beside the memory.
    """
    slot, value, negative = slot_value(memory)
    change = slots.compare(fact.slot_fact(), slots.SlotFact(slot, value, negative))
    if change is slots.Change.REPEAT:
        return Decision.SUPPORT
    return Decision.SUPERSEDE if change is slots.Change.REPLACE else None


def slot_guard(fact: Fact, candidates: list[Candidate]) -> tuple[Decision, Memory] | None:
    """The slot's decision when a candidate fills the fact's slot, else None.

    With an LLM this is the preference slot guard of seed 000 §1.4: a fact the
    rules can place by its slot ("prefer tea now" against "prefer coffee") is
    decided here, without asking the model, so the model is only asked what
    rules cannot tell.
    """
    decided = [(d, c.memory) for c in candidates if (d := slot_decision(fact, c.memory))]
    if not decided:
        return None

    def rank(pair: tuple[Decision, Memory]) -> tuple[bool, bool, datetime]:
        # the memory a change names first, a change before a repeat, then the newest
        decision, memory = pair
        named = fact.old_value is not None and slots.related(fact.old_value, slot_value(memory)[1])
        return named, decision is Decision.SUPERSEDE, memory.said_at

    return max(decided, key=rank)


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


def is_slot_change(fact: Fact, target: Memory) -> bool:
    """The fact changes the value of the target's slot (rather than adding to it)."""
    return slot_decision(fact, target) is Decision.SUPERSEDE


def said_outright(fact: Fact) -> bool:
    """The user's own words say the value changed ("I moved", "no longer", "from X to Y")."""
    return fact.change or fact.ends or fact.old_value is not None


def enforce(decision: Decision, fact: Fact, target: Memory | None) -> Decision:
    """The seed's category rules and pinned protection, over any decision.

    Two refinements keep changes of fact intact: a slot change supersedes in
    the profile category too (a merge would lose the old value's time), and
    a pinned memory, which the reconciler may not rewrite, is still
    superseded when the user says outright that its value changed.
    """
    if target is None:
        return Decision.SKIP if decision is Decision.SKIP else Decision.CREATE
    slot_change = decision is Decision.SUPERSEDE and is_slot_change(fact, target)
    if decision is Decision.CONTRADICT and fact.category in TEMPORAL_CATEGORIES:
        decision = Decision.SUPERSEDE
    if (
        fact.category is Category.PROFILE
        and decision in (Decision.SUPERSEDE, Decision.CONTRADICT)
        and not slot_change
    ):
        decision = Decision.MERGE  # a profile is one evolving record, never a contradiction
    if fact.category in APPEND_ONLY and decision not in (Decision.CREATE, Decision.SKIP):
        decision = Decision.SKIP if decision is Decision.SUPPORT else Decision.CREATE
    # what the user pinned is theirs to change: only their own "it changed" supersedes it
    pinned = target.memory_type is MemoryType.PINNED
    if pinned and decision in (Decision.MERGE, Decision.SUPERSEDE):
        decision = decision if slot_change and said_outright(fact) else Decision.CREATE
    return decision


def merged_text(old: str, new: str) -> str:
    """A MERGE without a model's wording: the old content with what the new one adds."""
    if new.strip().casefold() in old.casefold():
        return old
    old = old.rstrip()
    return f"{old if old.endswith(SENTENCE_ENDS) else old + '.'} {new.strip()}"
