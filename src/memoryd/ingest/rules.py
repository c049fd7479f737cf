"""Rule-based fact extraction: smart ingest that works offline (seeds 002, 003).

Without an LLM a conversation still says a lot in a few fixed shapes: "I
prefer tea", "we decided to use Postgres", "I usually run at 6", "I'm going to
Rome next week", "I live in Lisbon", "we relocated to Oslo", "I left teaching
and now work as a UX designer", and their Chinese twins. Each family is a
table of regexes (:mod:`memoryd.ingest.rule_families`); a user sentence that
matches becomes an :class:`ExtractedFact`, written as a fact about the user
(:mod:`memoryd.text.phrasing`: "The user relocated to Oslo in the spring
(2026-06)."), with the sentence the user said kept as its source. Lead-ins
("Big news:", "Remember that", "记住：") are not part of a fact. Questions,
greetings, thanks and talk about the assistant give nothing: "what do I
like?" is not a preference.

A fact carries what a reconciler needs to supersede or skip it without an
LLM (:mod:`memoryd.ingest.slots`): a ``slot`` (what the fact is about), a
``value``, its polarity, whether it says the value changed or is over, and
the value it replaces where it names one ("from MySQL to Postgres"). Slots:

* biography: fixed names, the same for English and Chinese: ``name``, ``age``,
  ``birthday``, ``lives_in``, ``works_at``, ``job``, ``from``, ``diet``,
  ``partner``, ``allergy:<thing>``, ``pet:<dog|cat>``;
* preference: ``preference:<topic>``, the topic being the first found of: the
  topic word of "my favourite X" / "我最喜欢的X" (through :data:`TOPIC_WORDS`
  when listed there: "colour" → ``color``), the object's topic in
  :data:`TOPIC_WORDS` ("tea", "咖啡" → ``drink``), the compared object's topic
  ("kombucha over coffee"), the topic of the verb before the object ("drinking
  kombucha", "喝…" → ``drink``); else the object itself, casefolded
  ("hiking"), or both compared objects sorted ("spaces/tabs");
* tools: ``uses:<topic>`` by the same topics ("I use Vim" → ``uses:editor``),
  else the purpose ("I manage my tasks in Todoist" → ``uses:tasks``);
* decision: ``decision:<topic>`` when the choice has a known topic, else None;
  habits and plans: None (a reconciler compares their text).

Within a sentence, a value that is over followed by its successor ("I quit my
accounting job and opened my own bakery", "我不再吃素了，现在什么都吃") is one
fact: the change, with the old value named.

Pure: no I/O, no clock, no model.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import datetime

from memoryd.ingest import slots
from memoryd.ingest.rule_families import NEG_VERBS
from memoryd.ingest.rule_match import find_hits, merge
from memoryd.models import MAX_L0_CHARS, MAX_L1_CHARS, MAX_L2_CHARS, Category
from memoryd.privacy import redact
from memoryd.text.phrasing import index_entry, named_fact, third_person
from memoryd.text.rule_tables import (
    CHANGE,
    JOINER,
    LEAD_IN,
    META,
    NOISE,
    NOISE_PREFIX,
    QUESTION,
    TRAILING_REQUEST,
    USER_ROLES,
    WRAPPING_QUOTES,
    Kind,
)

MAX_FACTS = 50
# seed 000 §1.1/§1.4: profile is who the user is, patterns recurring behaviour,
# events dated happenings (what a plan is). A decision is a case, not an event:
# a choice made in a context that later work should reuse, kept append-only as a
# record of a decision should be; events' admission prior (0.45) would drop most.
CATEGORY: dict[Kind, Category] = {
    "biography": Category.PROFILE,
    "preference": Category.PREFERENCES,
    "habit": Category.PATTERNS,
    "decision": Category.CASES,
    "plan": Category.EVENTS,
}
# who the user is outlasts what they like and do, which outlasts what they intend
IMPORTANCE: dict[Kind, float] = {
    "biography": 0.8,
    "preference": 0.7,
    "decision": 0.7,
    "habit": 0.6,
    "plan": 0.5,
}
SINGLE_VALUED = slots.SINGLE_VALUED

SENTENCE_BREAK = re.compile(r"(?<=[.!?…])\s+|(?<=[。！？；;!?])|\n+")
ABBREVIATIONS = ("mr.", "mrs.", "ms.", "dr.", "st.", "e.g.", "i.e.", "vs.", "etc.", "jr.", "prof.")
# "an engineer at Spotify": the employer beside a job
JOB_AT = re.compile(r"^(?P<job>.+?)\s+(?:at|for|with)\s+(?P<org>[A-Z][^,;]*)$")


@dataclass(frozen=True)
class ExtractedFact:
    """An atomic fact about the user, with what a reconciler needs to place it."""

    content: str
    l0_abstract: str
    l1_overview: str
    l2_content: str
    category: Category
    tags: list[str]
    importance: float
    kind: Kind
    slot: str | None
    value: str
    source_text: str
    negative: bool = False  # "I hate X", "我不喜欢X": the value is disliked
    change: bool = False  # "now", "no longer", "moved to", "现在": replaces what held before
    exclusive: bool = False  # the slot holds one value at a time ("prefer", "lives_in")
    ends: bool = False  # "I left teaching", "分手了": the value is over
    old_value: str | None = None  # the value it replaces, where it says ("from MySQL")
    message: int = 0  # which message of the batch said it

    def slot_fact(self) -> slots.SlotFact:
        return slots.of(self)


def split_sentences(text: str) -> list[str]:
    """Sentences (EN ``.!?``, CN ``。！？；``, newlines), not broken after "Dr." or "e.g."."""
    out: list[str] = []
    for piece in SENTENCE_BREAK.split(text):
        piece = piece.strip()
        if out and out[-1].lower().endswith(ABBREVIATIONS):
            out[-1] = f"{out[-1]} {piece}".strip()
        elif piece:
            out.append(piece)
    return out


def strip_lead_in(sentence: str) -> str:
    """The sentence without what wraps its fact: quote marks a host put around the message,
    greetings and announcements before it, a request to the assistant after it."""
    previous = None
    while previous != sentence:
        previous = sentence
        sentence = sentence.strip().strip(WRAPPING_QUOTES).strip()
        sentence = LEAD_IN.sub("", NOISE_PREFIX.sub("", sentence), count=1).strip()
    while (cut := TRAILING_REQUEST.sub("", sentence).strip()) != sentence:
        sentence = cut
    return sentence


def is_chatter(sentence: str) -> bool:
    """Greetings, thanks, questions and requests to the assistant: never facts."""
    s = strip_lead_in(sentence.strip())
    return bool(NOISE.match(sentence.strip()) or not s or QUESTION.search(s) or META.match(s))


def sentence_facts(
    sentence: str, message: str, when: datetime | None = None, index: int = 0
) -> list[ExtractedFact]:
    """The facts one user sentence states, each written about the user."""
    if is_chatter(sentence):
        return []
    body = strip_lead_in(sentence)
    hits = find_hits(body)
    facts: list[ExtractedFact] = []
    chinese = bool(re.search(r"[\u3400-\u9fff]", body))
    for hit, start, end in merge(hits, body):
        clause = JOINER.sub("", body[start:end]).strip() or body[start:end].strip()
        m, kind = hit.match, hit.kind
        groups = m.groupdict()
        verb = (groups.get("verb") or "").lower()
        change = hit.rule.change or hit.old_value is not None or bool(CHANGE.search(clause))
        ends = hit.rule.ends and hit.old_value is None
        value, org = hit.value, groups.get("org")
        if hit.slot == "job" and not org and (split := JOB_AT.match(value)):
            value, org = split["job"], split["org"]
        elided = hit.elided and start == hit.start
        if hit.slot == "name":
            content = named_fact("name", value, chinese)
        else:
            content = third_person(clause, elided=elided, when=when if change or ends else None)
        negative = bool(groups.get("neg")) or verb in NEG_VERBS
        entry = index_entry(hit.slot, value, negative, chinese) if hit.slot else content
        base = ExtractedFact(
            content=content,
            l0_abstract=entry[:MAX_L0_CHARS],
            l1_overview=" ".join(sentence.split())[:MAX_L1_CHARS],
            l2_content=message.strip() if len(message.strip()) <= MAX_L2_CHARS else sentence,
            category=CATEGORY[kind],
            tags=[kind, hit.slot.split(":", 1)[-1]] if hit.slot else [kind],
            importance=IMPORTANCE[kind],
            kind=kind,
            slot=hit.slot,
            value=value,
            source_text=message,
            negative=negative,
            change=change,
            exclusive=hit.rule.exclusive
            or bool(groups.get("excl"))
            or hit.other is not None
            or hit.slot in SINGLE_VALUED,
            ends=ends,
            old_value=hit.old_value or (hit.other if hit.rule.change else None),
            message=index,
        )
        facts.append(base)
        if hit.slot == "job" and org and not hit.rule.ends:
            org = org.strip(" .!?")
            works = named_fact("works_at", org, chinese)
            facts.append(
                replace(
                    base,
                    content=works,
                    l0_abstract=index_entry("works_at", org, False, chinese)[:MAX_L0_CHARS],
                    tags=["biography", "works_at"],
                    slot="works_at",
                    value=org,
                    old_value=None,
                )
            )
    return facts


def extract_facts(
    messages: list[tuple[str, str]],
    max_facts: int = MAX_FACTS,
    dates: list[datetime | None] | None = None,
) -> list[ExtractedFact]:
    """Facts the user stated, in the order said, at most ``max_facts`` (the latest ones).

    Only user turns count: what the assistant says is context, not the user's
    facts. A fact said twice in the batch (:func:`repeats`) is kept once, where
    first said. Private blocks are redacted first, so nothing private becomes a
    fact. ``dates`` (one a message, or None) date the changes.
    """
    facts: list[ExtractedFact] = []
    seen: set[tuple[str | bool | None, ...]] = set()
    for index, (role, text) in enumerate(messages):
        public = redact(text) if role.strip().lower() in USER_ROLES else None
        when = dates[index] if dates else None
        for sentence in split_sentences(public or ""):
            for fact in sentence_facts(sentence, public or "", when, index):
                if fact_key(fact) not in seen:
                    seen.add(fact_key(fact))
                    facts.append(fact)
    return facts[-max_facts:] if max_facts > 0 else []


def implied_category(text: str) -> Category | None:
    """The category of the first fact the rules read in ``text`` said by the user, if any."""
    found = extract_facts([("user", text)])
    return found[0].category if found else None


def fact_key(fact: ExtractedFact) -> tuple[str | bool | None, ...]:
    """What makes two facts the same: slot, value and polarity, or the words without a slot."""
    if fact.slot is None:
        return (fact.kind, " ".join(fact.content.casefold().split()).rstrip(".!。！"))
    return (fact.slot, fact.value.casefold(), fact.negative, fact.ends)


def repeats(new: ExtractedFact, old: ExtractedFact) -> bool:
    """``new`` says nothing ``old`` did not: skip it (or count it as support)."""
    return fact_key(new) == fact_key(old)


def updates(new: ExtractedFact, old: ExtractedFact) -> bool:
    """``new`` replaces ``old``: supersede it, keeping it reachable as of its time.

    The rules of :func:`memoryd.ingest.slots.compare`.
    """
    return slots.compare(new.slot_fact(), old.slot_fact()) is slots.Change.REPLACE
