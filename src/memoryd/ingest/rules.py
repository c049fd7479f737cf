"""Rule-based fact extraction: smart ingest that works offline (seeds 002, 003).

Without an LLM a conversation still says a lot in a few fixed shapes: "I
prefer tea", "we decided to use Postgres", "I usually run at 6", "I'm going to
Rome next week", "I live in Lisbon", and their Chinese twins. Each family is a
table of regexes (:mod:`memoryd.ingest.rule_tables`); a user sentence that
matches becomes an :class:`ExtractedFact` in the user's own words, so nothing
is translated or paraphrased. Questions, greetings, thanks and talk about the
assistant give nothing: "what do I like?" is not a preference.

A fact carries what a reconciler needs to supersede or skip it without an
LLM: a ``slot`` (what the fact is about), a ``value`` and three flags
(:func:`updates`, :func:`repeats`). Slots, in order of the rules:

* biography: fixed names, the same for English and Chinese: ``name``, ``age``,
  ``birthday``, ``lives_in``, ``works_at``, ``job``, ``from``, ``diet``,
  ``allergy:<thing>``, ``pet:<dog|cat>``;
* preference: ``preference:<topic>``, the topic being the first found of: the
  topic word of "my favourite X" / "我最喜欢的X" (through :data:`TOPIC_WORDS`
  when listed there: "colour" → ``color``), the object's topic in
  :data:`TOPIC_WORDS` ("tea", "咖啡" → ``drink``), the compared object's topic
  ("kombucha over coffee"), the topic of the verb before the object ("drinking
  kombucha", "喝…" → ``drink``); else the object itself, casefolded
  ("hiking"), or both compared objects sorted ("spaces/tabs");
* decision: ``decision:<topic>`` when the choice has a known topic, else None;
  habits and plans: None (a reconciler compares their text).

Pure: no I/O, no clock, no model.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memoryd.ingest.privacy import REDACTED, redact
from memoryd.ingest.rule_tables import (
    BAD_VALUE,
    CHANGE,
    COMPARE,
    COMPARE_BEFORE,
    FAMILIES,
    JOINER,
    LEAD_FILLER,
    LEAD_VERB,
    META,
    NEG_VERBS,
    NOISE,
    NOISE_PREFIX,
    PETS,
    QUESTION,
    STOP,
    TAIL_FILLER,
    TOPIC_WORDS,
    TRIVIAL_PLAN,
    VERB_TOPICS,
    Kind,
    Rule,
)
from memoryd.models import Category

MAX_FACTS = 50
USER_ROLES = frozenset(("user", "human"))
MAX_L0_CHARS, MAX_L1_CHARS, MAX_L2_CHARS = 120, 300, 2000
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
# slots that hold one value at a time: a new value replaces the old one
SINGLE_VALUED = frozenset(
    ("name", "age", "birthday", "lives_in", "works_at", "job", "from", "diet")
)

SENTENCE_BREAK = re.compile(r"(?<=[.!?…])\s+|(?<=[。！？；;!?])|\n+")
ABBREVIATIONS = ("mr.", "mrs.", "ms.", "dr.", "st.", "e.g.", "i.e.", "vs.", "etc.", "jr.", "prof.")


@dataclass(frozen=True)
class ExtractedFact:
    """An atomic fact in the user's own words, with what a reconciler needs to place it."""

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


def is_chatter(sentence: str) -> bool:
    """Greetings, thanks, questions and requests to the assistant: never facts."""
    s = NOISE_PREFIX.sub("", sentence.strip())
    return bool(NOISE.match(sentence.strip()) or QUESTION.search(s) or META.match(s))


def topic_of(text: str) -> str | None:
    """The topic of an object: of the whole of it, its last word, or a Chinese suffix."""
    t = " ".join(text.casefold().split())
    if t in TOPIC_WORDS:
        return TOPIC_WORDS[t]
    if " " in t:
        return TOPIC_WORDS.get(t.rsplit(" ", 1)[1])
    return next((TOPIC_WORDS[t[-n:]] for n in (4, 3, 2, 1) if t[-n:] in TOPIC_WORDS), None)


def clean_value(raw: str, strip_verb: bool) -> tuple[str, str | None, str | None]:
    """``(value, compared object, verb topic)``; the value is a substring of ``raw``."""
    value = STOP.split(raw, maxsplit=1)[0]
    other: str | None = None
    parts = COMPARE.split(value, maxsplit=1)
    if len(parts) == 2:
        value, other = parts[0], clean_value(parts[1], strip_verb)[0] or None
    verb_topic = None
    value = value.strip(" \t\"'“”‘’.!?。！？")
    for _ in range(3):  # "to drink the …", "了喝…"
        value = TAIL_FILLER.sub("", value).strip()
        lead = LEAD_VERB.match(value) if strip_verb else None
        if lead:
            verb_topic = verb_topic or VERB_TOPICS.get((lead["verb"] or lead["cn"]).lower())
            value = value[lead.end() :]
        value = LEAD_FILLER.sub("", value).strip(" \"'“”‘’")
    return value, other, verb_topic


def slot_for(
    kind: Kind, rule: Rule, m: re.Match[str], value: str, other: str | None, verb: str | None
) -> str | None:
    """The slot rules of the module docstring, in its order."""
    groups = m.groupdict()
    if kind == "biography":
        if rule.slot == "pet":
            return f"pet:{PETS.get(groups['pet'].lower(), groups['pet'].lower())}"
        return f"allergy:{value.casefold()}" if rule.slot == "allergy" else rule.slot
    named = groups.get("topic")
    topic = (
        (named and (topic_of(named) or " ".join(named.casefold().split())))
        or topic_of(value)
        or (other and topic_of(other))
    )
    if kind == "decision":
        return f"decision:{topic}" if topic else None
    if kind != "preference":
        return None
    names = sorted({" ".join(v.casefold().split()) for v in (value, other) if v})
    return f"preference:{topic or verb or '/'.join(names)}"


Hit = tuple[int, int, Kind, Rule, re.Match[str], str, str | None, str | None]


def find_hits(sentence: str) -> list[Hit]:
    """Every family's matches, the earlier family's kept where two overlap, in sentence order."""
    hits: list[Hit] = []
    for kind, family in FAMILIES:
        for rule in family:
            for m in rule.pattern.finditer(sentence):
                before = sentence[: m.start()]
                elided = "elided" in m.re.groupindex and m["elided"] is not None
                if elided and ("我" not in before or re.search("[他她它你]", before)):
                    continue
                value, other, verb_topic = clean_value(m["obj"], kind in ("preference", "decision"))
                if not value or len(value) > 80 or BAD_VALUE.search(value) or REDACTED in value:
                    continue
                if kind == "plan" and TRIVIAL_PLAN.match(m["obj"].strip()):
                    continue
                end = m.start("obj") + m["obj"].find(value) + len(value)
                if not any(m.start() < e and s < end for s, e, *_ in hits):
                    hits.append((m.start(), end, kind, rule, m, value, other, verb_topic))
    return sorted(hits, key=lambda h: h[0])


def sentence_facts(sentence: str, message: str) -> list[ExtractedFact]:
    """The facts one user sentence states; the whole sentence is the content of a lone one."""
    if is_chatter(sentence):
        return []
    hits = find_hits(sentence)
    facts: list[ExtractedFact] = []
    for i, (start, end, kind, rule, m, value, other, verb_topic) in enumerate(hits):
        clause_start = hits[i - 1][1] if i else 0
        clause_end = hits[i + 1][0] if i + 1 < len(hits) else len(sentence)
        text = sentence if len(hits) == 1 else sentence[start : max(end, min(m.end(), clause_end))]
        content = JOINER.sub("", NOISE_PREFIX.sub("", text)).strip() or text.strip()
        if other is None and (before := COMPARE_BEFORE.search(sentence[clause_start:start])):
            other = clean_value(before["other"], True)[0] or None
        slot = slot_for(kind, rule, m, value, other, verb_topic)
        verb = (m.groupdict().get("verb") or "").lower()
        facts.append(
            ExtractedFact(
                content=content,
                l0_abstract=" ".join(content.split())[:MAX_L0_CHARS],
                l1_overview=" ".join(sentence.split())[:MAX_L1_CHARS],
                l2_content=message.strip() if len(message.strip()) <= MAX_L2_CHARS else sentence,
                category=CATEGORY[kind],
                tags=[kind, slot.split(":", 1)[-1]] if slot else [kind],
                importance=IMPORTANCE[kind],
                kind=kind,
                slot=slot,
                value=value,
                source_text=message,
                negative=bool(m.groupdict().get("neg")) or verb in NEG_VERBS,
                change=rule.change or bool(CHANGE.search(sentence[clause_start:clause_end])),
                exclusive=rule.exclusive
                or bool(m.groupdict().get("excl"))
                or other is not None
                or slot in SINGLE_VALUED,
            )
        )
    return facts


def extract_facts(
    messages: list[tuple[str, str]], max_facts: int = MAX_FACTS
) -> list[ExtractedFact]:
    """Facts the user stated, in the order said, at most ``max_facts`` (the latest ones).

    Only user turns count: what the assistant says is context, not the user's
    facts. A fact said twice in the batch (:func:`repeats`) is kept once, where
    first said. Private blocks are redacted first, so nothing private becomes a
    fact.
    """
    facts: list[ExtractedFact] = []
    seen: set[tuple[str | bool | None, ...]] = set()
    for role, text in messages:
        public = redact(text) if role.strip().lower() in USER_ROLES else None
        for sentence in split_sentences(public or ""):
            for fact in sentence_facts(sentence, public or ""):
                if fact_key(fact) not in seen:
                    seen.add(fact_key(fact))
                    facts.append(fact)
    return facts[-max_facts:] if max_facts > 0 else []


def fact_key(fact: ExtractedFact) -> tuple[str | bool | None, ...]:
    """What makes two facts the same: slot, value and polarity, or the words without a slot."""
    if fact.slot is None:
        return (fact.kind, " ".join(fact.content.casefold().split()).rstrip(".!。！"))
    return (fact.slot, fact.value.casefold(), fact.negative)


def repeats(new: ExtractedFact, old: ExtractedFact) -> bool:
    """``new`` says nothing ``old`` did not: skip it (or count it as support)."""
    return fact_key(new) == fact_key(old)


def updates(new: ExtractedFact, old: ExtractedFact) -> bool:
    """``new`` replaces ``old``: supersede it, keeping it reachable as of its time.

    Same slot, and either the same value with the other polarity ("I don't
    like coffee anymore"), or another liked value where the new fact says it
    changed or the slot holds one value at a time. Disliking Y never cancels
    liking X.
    """
    if new.slot is None or new.slot != old.slot:
        return False
    if new.value.casefold() == old.value.casefold():
        return new.negative != old.negative
    return not new.negative and (new.change or new.exclusive)
