"""What a fact does to the known value of its slot: repeat it, replace it, or stand beside it.

A slot is what a fact is about (``lives_in``, ``job``, ``preference:drink``,
``uses:editor``); its value is what the user said about it ("Oslo", "UX
designer", "coffee"). The extractor names both, the reconciler compares a
new fact with the memories of its slot, and both ask this module, so the
rules of change are written once:

* the same value, said the same way, is a repeat (SUPPORT);
* the same value with the other polarity ("I don't like spicy food anymore"
  after "I love spicy Thai food": the values need only be related, one's
  words within the other's) replaces it;
* a value that is over ("I left teaching", "分手了") replaces what the slot
  held when the slot holds one value at a time, or when it names that value;
* another value replaces the old one when the fact says it changed ("now",
  "moved to", 现在) or the slot holds one value at a time ("lives_in");
  otherwise both stand ("I like tea" after "I like coffee").

Liking a thing and using it are one subject: ``preference:editor`` and
``uses:editor`` compare as the same slot ("I use Vim", then "I switched to
VS Code"). Pure: no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from memoryd.text.rule_tables import words

# slots that hold one value at a time: a new value replaces the old one
SINGLE_VALUED = frozenset(
    ("name", "age", "birthday", "lives_in", "works_at", "job", "from", "diet", "partner")
)
# slot families whose topic is what they are about ("preference:drink" ~ "uses:drink")
THING_FAMILIES = frozenset(("preference", "uses"))
_WORD = re.compile(r"[\w+#.-]+", re.UNICODE)
_FILLER = words("a an the my our some of to in at for on with and own")


class Change(StrEnum):
    REPEAT = "repeat"
    REPLACE = "replace"


@dataclass(frozen=True)
class SlotFact:
    """What the comparison needs of a fact or of a memory's slot."""

    slot: str | None
    value: str | None
    negative: bool = False
    change: bool = False
    exclusive: bool = False
    ends: bool = False
    old_value: str | None = None


class Slotted(Protocol):
    """A fact or a memory's reading, with what :func:`compare` needs."""

    @property
    def slot(self) -> str | None: ...
    @property
    def value(self) -> str | None: ...
    @property
    def negative(self) -> bool: ...
    @property
    def change(self) -> bool: ...
    @property
    def exclusive(self) -> bool: ...
    @property
    def ends(self) -> bool: ...
    @property
    def old_value(self) -> str | None: ...


def of(fact: Slotted) -> SlotFact:
    """The slot reading of a fact (extracted by the rules or handed to the reconciler)."""
    return SlotFact(
        fact.slot,
        fact.value,
        fact.negative,
        fact.change,
        fact.exclusive,
        fact.ends,
        fact.old_value,
    )


def same_slot(a: str | None, b: str | None) -> bool:
    """One subject: the same slot, or a liking and a use of the same topic."""
    if a is None or b is None:
        return False
    if a == b:
        return True
    fa, _, ta = a.partition(":")
    fb, _, tb = b.partition(":")
    return bool(ta) and ta == tb and fa in THING_FAMILIES and fb in THING_FAMILIES


def _family(slot: str | None) -> str | None:
    return None if slot is None else slot.partition(":")[0]


def single_valued(slot: str | None) -> bool:
    return slot is not None and slot in SINGLE_VALUED


def _words(value: str) -> set[str]:
    return {w for w in _WORD.findall(value.casefold()) if w not in _FILLER}


def same_value(a: str | None, b: str | None) -> bool:
    return a is not None and b is not None and a.strip().casefold() == b.strip().casefold()


def related(a: str | None, b: str | None) -> bool:
    """Two values that name the same thing, one more precisely ("spicy food", "spicy Thai
    food"; "辣", "吃辣"): one's words are all within the other's, or one text holds the other."""
    if not a or not b:
        return False
    x, y = a.strip().casefold(), b.strip().casefold()
    if x == y or (len(min(x, y, key=len)) >= 1 and (x in y or y in x) and not x.isascii()):
        return True
    wx, wy = _words(x), _words(y)
    return bool(wx and wy) and (wx <= wy or wy <= wx)


def compare(new: SlotFact, old: SlotFact) -> Change | None:
    """What ``new`` does to ``old`` (the value a memory holds), by the rules above."""
    if new.old_value is not None and related(new.old_value, old.value):
        return Change.REPLACE  # "from MySQL to Postgres" names what it replaces
    if new.ends and _family(new.slot) == _family(old.slot) and related(new.value, old.value):
        return Change.REPLACE  # "I stopped using Todoist", whatever Todoist was used for
    if not same_slot(new.slot, old.slot):
        return None
    if same_value(new.value, old.value) and new.negative == old.negative and not new.ends:
        return Change.REPEAT
    if new.ends:
        return Change.REPLACE if single_valued(new.slot) or related(new.value, old.value) else None
    if related(new.value, old.value) and new.negative != old.negative:
        return Change.REPLACE
    if same_value(new.value, old.value):
        return Change.REPEAT
    if not new.negative and (new.change or new.exclusive or single_valued(new.slot)):
        return Change.REPLACE
    return None
