"""What a statement is about, by meaning: the attribute of the user it gives a value of.

Phrase rules (:mod:`memoryd.ingest.rules`) read a few fixed shapes; people
say a change in many more ("jumped ship to Stripe", "提了台卡罗拉"). What
those sentences share is what they are about: where the user lives, works,
what they drive, eat, code in. Each attribute has a handful of short
example statements and the words of its subject matter
(:mod:`memoryd.text.attribute_tables`). A message is read sentence by
sentence: an English sentence is about the attribute whose examples its
embedding is closest to (its words adding a bonus), when that is close
enough and clearly closer than the next (the bundled embedder, no LLM); a
Chinese one by its words alone, the bundled model reading English only.

Readings of the words alone (:mod:`memoryd.text.statements`) decide whether the
statement can change the user's value at all:

* **subject**: a statement whose subject is another person ("my sister
  lives in Boston", "我老公在腾讯") is that person's, never the user's;
* **modality**: a plan, wish or question ("thinking about moving to
  Seattle", "打算明年换工作", "any tips for Denver?"), a past told as past,
  a liking beside others, a value denied or over with none new: none of
  these replaces anything;
* **change**: a statement naming the old value without saying it changed
  ("my coffee grinder" after "I drink coffee") repeats or adds to it.

A statement of a single-valued attribute by the user, as a fact, retires
every older current memory of that attribute, raw turns and distilled facts
alike (:func:`retire_replaced`): the newest said wins, by when it was said,
so an old chat imported late becomes the history it is instead of the
current value. Multi-valued attributes (pets, hobbies, languages spoken)
accumulate. Each memory read so is marked ``about:<attribute>`` (found again
through the marks index), with ``about:other``, ``about:plan``,
``about:past`` or ``about:liking`` beside it when it holds no value of the
user's that a newer statement could replace. Two memories of one
conversation never retire each other here: the rules compare them.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from memoryd.models import (
    ABOUT_PREFIX,
    LIKING_MARK,
    MENTION_MARK,
    NOT_A_VALUE_MARKS,
    NOTHING_MARK,
    OTHER_MARK,
    PAST_MARK,
    PLAN_MARK,
    Memory,
    MemoryType,
    utcnow,
)
from memoryd.store import MemoryFilter
from memoryd.text.attribute_meaning import (
    MIN_WORDS,
    Prototypes,
    by_meaning,
    is_cjk,
    named_attributes,
)
from memoryd.text.attribute_tables import (
    ATTRIBUTES,
    NOT_A_VALUE_ZH,
)
from memoryd.text.conversation import spoken, spoken_by_user
from memoryd.text.statements import (
    changes_value,
    comes_back_from,
    first_person,
    has_subject,
    in_first_person,
    is_about_user,
    is_ending_only,
    is_liking,
    is_other,
    is_past,
    is_plan,
    is_question,
    names_a_value_of,
    names_child,
    names_partner,
    opens_with_a_thing,
    says_changed,
    short_forms,
    value_words,
)

if TYPE_CHECKING:
    from memoryd.ingest.memories import TenantMemories

# the attribute that is the user's relation to another person: said of that person by name
RELATIONSHIP = "partner"
CHILDREN = "children"
# memories of one attribute read back to retire (a space states each a few times)
MAX_HOLDERS = 200

# sentences of a message: each is read on its own
# (an emoji ends one as a full stop does); a sentence keeps its own mark, so a question is
# read as one
_SENTENCE = re.compile(
    r"(?<=[.!?])\s+|(?<=[。！？!?～~])(?![。！？!?～~])|\n+|"
    r"\s*[\U0001F300-\U0001FAFF\u2600-\u27BF]+\s*"
)
# clauses of a sentence ("broke up w/ X, signed a lease in Brooklyn, and adopted a dog"):
# one message often says several things, each its own attribute; a long sentence embedded
# whole is near none of them
_CLAUSE = re.compile(
    r"\s*(?:[,;，；—–]|\s-)\s*+(?!(?:which|who|whom|whose|where|that)\b)|"
    r"\s+(?:and|but|so)\s+(?=(?:i|i'm|im|i've|we|we're|my|our)\b)",
    re.IGNORECASE,
)


# the word joining a clause to the one before ("…, and if anything I'd …") or a note's
# label: the clause is read from what follows it
_LEAD = re.compile(
    r"^\s*(?:(?:and|but|so|or|then)\b|"
    # a note's label ("Reminder to self:", "todo:", "Runbook entry:", "Update:"): what
    # follows is read as it is, an instruction or a condition as such
    r"[A-Za-z][\w'-]*(?:\s+[\w'-]+){0,2}\s*:(?!\d))\s*",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Part:
    """One sentence's reading: the attributes it gives values of, and how it gives them."""

    attributes: tuple[str, ...]
    liking: bool = False  # a liking that says no change: it stands beside the others
    past: bool = False  # what held once, told as such ("I used to live in Paris")
    ends_only: bool = False  # a value over and none new: the rules know which one
    other: bool = False  # another person's fact
    plan: bool = False  # a plan or wish, not what holds
    # about its attribute only by naming a value the user stated before, and saying neither
    # that it changed nor that it is over: it mentions the value ("Wuhan is hot")
    mentions: bool = False
    # opens with a thing ("the Corolla finally died"): the user's only when it names a value
    # the user stated (then it ends, changes or mentions that value); else it is dropped
    thing: bool = False
    words: str = field(default="", compare=False)  # the clause read

    def replacing(self) -> list[str]:
        """The single-valued attributes whose user value this sentence replaces."""
        if self.other or self.plan or self.liking or self.past or self.ends_only or self.mentions:
            return []
        return [a for a in self.attributes if ATTRIBUTES[a][0]]

    def ending(self) -> list[str]:
        """The attributes (single- or multi-valued) one of whose user values this sentence
        says is over, and names ("our cat Mochi passed away", "I stopped drinking coffee")."""
        if self.other or self.plan or self.past or not self.ends_only:
            return []
        return list(self.attributes)


@dataclass(frozen=True)
class Reading:
    """What a statement (a message, a memory) says of whom, sentence by sentence."""

    parts: tuple[Part, ...] = ()

    @property
    def attributes(self) -> list[str]:
        return list(dict.fromkeys(a for p in self.parts for a in p.attributes))

    def replacing(self) -> list[str]:
        return list(dict.fromkeys(a for p in self.parts for a in p.replacing()))

    def ending(self) -> list[str]:
        return list(dict.fromkeys(a for p in self.parts for a in p.ending()))

    def marks(self) -> list[str]:
        """``about:<attribute>`` for each; ``about:other`` (``plan``, ``past``, ``liking``)
        when every sentence that names one is another person's (a plan, told as past, a
        liking); ``about:none`` when there is nothing of these: read, about nothing."""
        out = [ABOUT_PREFIX + a for a in self.attributes]
        # whose and how: read from the sentences that name an attribute, else from them all
        named = [p for p in self.parts if p.attributes] or list(self.parts)
        if named:
            for mark, flag in (
                (OTHER_MARK, "other"),
                (PLAN_MARK, "plan"),
                (PAST_MARK, "past"),
                (LIKING_MARK, "liking"),
                (MENTION_MARK, "mentions"),
            ):
                if all(getattr(p, flag) for p in named):
                    out.append(mark)
        return out or [NOTHING_MARK]


def read(
    texts: Sequence[str], mine: TenantMemories, exclude: Collection[str] = ()
) -> list[Reading]:
    """The reading of each statement, clause by clause: a question or a plan beside a
    statement ("Moved to Denver! Any tips?") leaves the statement what it is."""
    statements = [_clauses(t) for t in texts]
    english = [c for sentences in statements for s in sentences for c in s if not is_cjk(c)]
    rows: dict[str, list[float]] = {}
    labels: list[str] = []
    if english:
        labels, examples = Prototypes.of_embedder(mine.engine.embedder, mine.engine.embed)
        unique = list(dict.fromkeys(english))
        # unit rows: the dot product is the cosine
        sims = mine.embed([first_person(c) for c in unique]) @ examples.T
        rows = {text: row.tolist() for text, row in zip(unique, sims, strict=True)}
    readings = [
        Reading(tuple(p for sentence in sentences for p in _read_sentence(sentence, labels, rows)))
        for sentences in statements
    ]
    if any(not p.attributes for r in readings for p in r.parts):
        anchors = _anchors(mine, exclude)
        readings = [Reading(tuple(_anchored(p, anchors) for p in r.parts)) for r in readings]
    # a thing that names none of the user's values is not the user's: read as before, nothing
    kept = [tuple(p for p in r.parts if p.attributes or not p.thing) for r in readings]
    return [Reading(_carried(parts)) for parts in kept]


def _carried(parts: tuple[Part, ...]) -> tuple[Part, ...]:
    """A change told with no attribute of its own and no subject, right after a part that
    has one ("超猩太贵了，换成乐刻了", "the gym got pricey, switched to Crunch"), changes
    that attribute: the user's, as the part before is."""
    out: list[Part] = []
    for part in parts:
        before = out[-1] if out else None
        if (
            before is not None
            and before.attributes
            and not (before.other or before.plan or before.past)
            and not part.attributes
            and not has_subject(part.words)
            and says_changed(part.words)
        ):
            part = replace(part, attributes=before.attributes, mentions=False)
        out.append(part)
    return tuple(out)


# the user's statements a clause may name a value of: the newest read ones of each
# attribute, found through the marks index (no other row is read)
ANCHORS_EACH = 20


def _anchors(
    mine: TenantMemories, exclude: Collection[str] = ()
) -> list[tuple[set[str], tuple[str, ...]]]:
    """The value words and attributes of the user's newest statements read so far (but
    those of ``exclude``: a memory is never its own anchor)."""
    seen: dict[str, Memory] = {}
    for name in ATTRIBUTES:
        seen.update((m.id, m) for m in _stating(mine, name, ANCHORS_EACH) if m.id not in exclude)
    out = []
    for m in seen.values():
        named = (k[len(ABOUT_PREFIX) :] for k in m.marks if k.startswith(ABOUT_PREFIX))
        about = tuple(a for a in named if a in ATTRIBUTES)
        if about and not {OTHER_MARK, PLAN_MARK, MENTION_MARK} & set(m.marks):
            out.append((value_words(m.content) | short_forms(m.content), about))
    return out


def _anchored(part: Part, anchors: list[tuple[set[str], tuple[str, ...]]]) -> Part:
    """A clause whose words name no attribute ("rejoined microsoft this month", "捷达卖了")
    is about what the user's earlier statement naming the same value was about."""
    if part.attributes or not anchors:
        return part
    words = value_words(part.words)
    if not words:
        return part
    shared = [(len(words & held), about) for held, about in anchors]
    best = max(n for n, _ in shared)
    if best == 0:
        return part
    found = tuple(dict.fromkeys(a for n, about in shared if n == best for a in about))
    said = says_changed(part.words) or part.ends_only  # a change, or an end, of that value
    return replace(part, attributes=found, mentions=not said)


def _clauses(text: str) -> list[list[str]]:
    """A statement's sentences, each as its clauses."""
    sentences = [p for p in _SENTENCE.split(spoken(text)) if p.strip()]
    return [
        [c for c in (_LEAD.sub("", part) for part in _CLAUSE.split(s) if part) if c.strip()]
        for s in sentences
    ]


def _read_sentence(
    clauses: list[str], labels: list[str], rows: dict[str, list[float]]
) -> list[Part]:
    """Each clause's part. A clause with no subject of its own ("My sister, who lives in
    Boston", "might move, still debating") is said of whom the clause before it is, and
    as it is: another person's, a plan, a liking; a plan anywhere in the sentence makes
    each clause one that does not say a change happened. Its time is its own
    ("以前在纽约，现在在伦敦")."""
    parts: list[Part] = []
    before: Part | None = Part(())
    # a plan colours its whole sentence ("if the offer comes through, I'll move to Denver")
    # but for a clause that says a change happened ("moved last month, thinking of a dog")
    planned = any(is_plan(words) for words in clauses)
    for words in clauses:
        own = has_subject(words)
        if own and not is_about_user(words):
            before = None
            if opens_with_a_thing(words) and not is_question(words):
                ends = is_ending_only(words)
                parts.append(Part((), past=is_past(words), ends_only=ends, thing=True, words=words))
            continue
        if (not own and before is None) or is_question(words):
            continue
        cued = named_attributes(words)
        chinese = is_cjk(words)
        if chinese and NOT_A_VALUE_ZH.search(words):
            found = []
        elif chinese or len(words.split()) >= MIN_WORDS:
            found = (
                cued
                if words not in rows
                else by_meaning(labels, rows[words], cued, mine=in_first_person(words))
            )
        else:  # a lone word ("Ana, my daughter, …"): a name or a greeting, no statement
            found = cued
        inherited = before if not own and before is not None else Part(())
        part = Part(
            tuple(a for a in found if a in ATTRIBUTES),
            liking=is_liking(words) or inherited.liking,
            # a child told in the past ("was born", "was a handful at two") is still the
            # user's child: a lasting relation, not what held once; a place come back from
            # is where the user was ("just got back from a week in Kyoto")
            past=(is_past(words) or comes_back_from(words)) and found != [CHILDREN],
            ends_only=is_ending_only(words),
            # "my girlfriend is called Anna", "my son Leo was born": they open with another
            # person but give no attribute of theirs, only the relation: who the user's
            # partner and children are, the user's own facts
            other=(is_other(words) or inherited.other)
            and not (found == [RELATIONSHIP] and names_partner(words))
            and not (found == [CHILDREN] and names_child(words)),
            plan=is_plan(words) or inherited.plan or (planned and not says_changed(words)),
            words=words,
        )
        parts.append(part)
        before = part
    return parts


def _same_conversation(a: Memory, b: Memory) -> bool:
    """Two memories of one conversation: a turn and the fact distilled from it, or two
    readings of one message, never retire each other here (the rules compare them)."""
    return a.session_id is not None and a.session_id == b.session_id


def retire_replaced(mine: TenantMemories, memory: Memory, reading: Reading) -> int:
    """For each attribute whose value ``memory`` replaces: retire the current memories of
    it said before ``memory``; or ``memory`` itself when a newer one holds it. The number
    retired."""
    from memoryd.ingest.apply import retire

    retired = 0
    when = memory.said_at
    for attribute in reading.replacing():
        users = _user_values(mine, memory, attribute)
        newer = [h for h in users if h.said_at > when and changes_value(h.content, memory.content)]
        if newer:  # said before what holds now: history from the start
            latest = min(newer, key=lambda h: h.said_at)
            retire(mine, memory, latest, latest.said_at)
            return retired + 1
        for old in users:
            if old.said_at < when and changes_value(memory.content, old.content):
                retire(mine, old, memory, when)
                retired += 1
    for attribute in reading.ending():  # only the value it names ends, the others stand
        for old in _user_values(mine, memory, attribute):
            if old.said_at < when and names_a_value_of(memory.content, old.content):
                retire(mine, old, memory, when)
                retired += 1
    return retired


def _stating(mine: TenantMemories, attribute: str, limit: int) -> list[Memory]:
    """The current memories read as stating ``attribute`` (through the marks index), seen
    by whoever reads, newest first."""
    found, _ = mine.store.list_memories(
        mine.tenant_id,
        [mine.space_id],
        mine.scoped(MemoryFilter(marks=[ABOUT_PREFIX + attribute], live_at=utcnow())),
        limit=limit,
        with_total=False,
    )
    return found


def _user_values(mine: TenantMemories, memory: Memory, attribute: str) -> list[Memory]:
    """The current memories stating the user's value of ``attribute`` that ``memory`` may
    change: of its own scope (an agent's note leaves the global ones be), seen by whoever
    adds it, and not of its own conversation."""
    return [
        h
        for h in _stating(mine, attribute, MAX_HOLDERS)
        if h.id != memory.id
        and h.scope == memory.scope
        and not NOT_A_VALUE_MARKS & set(h.marks)
        and not _same_conversation(h, memory)
    ]


def read_session(mine: TenantMemories, session_id: str | None) -> int:
    """Read the statements of a conversation not read yet (the user's turns and the facts
    distilled from them), mark each with what it is about, and retire what each replaces.
    The number of memories retired."""
    if not session_id:
        return 0
    rows, _ = mine.store.list_memories(
        mine.tenant_id,
        [mine.space_id],
        MemoryFilter(session_id=session_id, live_at=utcnow()),
        limit=MAX_HOLDERS,
        sort="created_at",
        order="asc",
        with_total=False,
    )
    unread = [
        m
        for m in rows
        if not any(k.startswith(ABOUT_PREFIX) for k in m.marks)
        and (m.memory_type is not MemoryType.SESSION or spoken_by_user(m))
    ]
    readings = read([m.content for m in unread], mine)
    said = [
        p
        for m, r in zip(unread, readings, strict=True)
        if m.memory_type is MemoryType.SESSION
        for p in r.parts
        if p.attributes
    ]
    readings = _ended_as_history(
        [
            _as_said(r, m.content, said)
            if m.memory_type is not MemoryType.SESSION and not r.attributes
            else r
            for m, r in zip(unread, readings, strict=True)
        ]
    )
    retired = 0
    # one conversation's memories never retire each other here (_same_conversation), so
    # each is still current when its turn comes
    for memory, reading in zip(unread, readings, strict=True):
        marks = reading.marks()
        mine.store.add_marks(memory.id, marks)  # bookkeeping: no new version of the memory
        memory = memory.model_copy(update={"marks": [*memory.marks, *marks]})
        retired += retire_replaced(mine, memory, reading)
    return retired


def _as_said(reading: Reading, fact: str, said: list[Part]) -> Reading:
    """A fact distilled from a turn is about what the turn's clause it restates is about
    (the one sharing most of its value words), when its own words are too few to tell."""
    words = value_words(fact)
    shared = [(len(words & value_words(p.words)), p) for p in said]
    best = max(shared, key=lambda kv: kv[0], default=(0, None))
    return Reading((best[1],)) if best[1] is not None and best[0] else reading


def _ended_as_history(readings: list[Reading]) -> list[Reading]:
    """In one conversation, a value said to be over beside a new value of the same
    attribute ("no longer vegetarian, I eat meat again"; "broke up with Marco, seeing Priya
    now") is history: the new value is what holds, the ending is how it came to be."""
    replaced = {a for r in readings for a in r.replacing()}
    return [
        Reading(
            tuple(
                replace(p, past=True) if p.ending() and set(p.ending()) <= replaced else p
                for p in r.parts
            )
        )
        for r in readings
    ]
