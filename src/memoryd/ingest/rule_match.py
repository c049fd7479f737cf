"""Stage 3 without an LLM, first half: where in a sentence the rule families match.

Each family's rules are tried at every position (two facts of one sentence
may overlap: "I love hiking and I prefer tea"); where two matches overlap,
the earlier family's wins. A match becomes a :class:`Hit` with its cleaned
value and its slot (the slot rules are in :mod:`memoryd.ingest.rules`' own
docstring); :func:`merge` then joins the hits of one sentence that are one
change ("I quit my accounting job and opened my own bakery"). How a hit is
written as a fact is :mod:`memoryd.ingest.rules`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memoryd.ingest import slots
from memoryd.ingest.rule_families import FAMILIES
from memoryd.privacy import REDACTED
from memoryd.text.rule_tables import (
    BAD_VALUE,
    COMPARE,
    COMPARE_BEFORE,
    LEAD_FILLER,
    LEAD_VERB,
    NOT_A_NAME,
    PETS,
    STOP,
    TAIL_FILLER,
    TOPIC_WORDS,
    TRIVIAL_PLAN,
    VERB_TOPICS,
    Kind,
    Rule,
)

# an earlier value said as past beside the current one ("以前在纽约工作，现在在伦敦工作")
PAST = re.compile(r"\b(?:used to|formerly|previously|before)\b|以前|之前|原来|曾经", re.I)
OTHER_SUBJECT = re.compile(r"\b(?:he|she|they|you|it|his|her)\b", re.I)


@dataclass
class Hit:
    """One rule's match in a sentence, before it is written as a fact."""

    start: int
    end: int
    kind: Kind
    rule: Rule
    match: re.Match[str]
    value: str
    other: str | None
    verb_topic: str | None
    elided: bool
    slot: str | None = None
    old_value: str | None = None


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


def slot_for(kind: Kind, hit: Hit) -> str | None:
    """The slot rules of the module docstring, in their order."""
    rule, m, value, other = hit.rule, hit.match, hit.value, hit.other
    groups = m.groupdict()
    if kind == "biography":
        if rule.slot == "pet":
            return f"pet:{PETS.get(groups['pet'].lower(), groups['pet'].lower())}"
        return f"allergy:{value.casefold()}" if rule.slot == "allergy" else rule.slot
    named = groups.get("topic")
    named_topic = named and (topic_of(named) or " ".join(named.casefold().split()))
    if rule.slot == "uses":
        purpose = re.search(r"\bfor\s+(?:all\s+)?(?:my|our)\s+([\w-]+)", m["obj"], re.I)
        topic = (
            topic_of(value)
            or (other and topic_of(other))
            or named_topic
            or (purpose and (topic_of(purpose[1]) or purpose[1].casefold()))
        )
        return f"uses:{topic or ' '.join(value.casefold().split())}"
    topic = named_topic or topic_of(value) or (other and topic_of(other))
    if kind == "decision":
        return f"decision:{topic}" if topic else None
    if kind != "preference":
        return None
    names = sorted({" ".join(v.casefold().split()) for v in (value, other) if v})
    return f"preference:{topic or hit.verb_topic or '/'.join(names)}"


def _elided_ok(before: str) -> bool:
    """A left-out subject is the user's when the user was the last subject named."""
    if re.search(r"[\u3400-\u9fff]", before):
        return "我" in before and not re.search("[他她它你]", before.rsplit("我", 1)[-1])
    last = max((m.end() for m in re.finditer(r"\b(?:I|I'm|I've|we|we're)\b", before)), default=-1)
    return last >= 0 and not OTHER_SUBJECT.search(before[last:])


def _matches(rule: Rule, sentence: str) -> list[re.Match[str]]:
    """Every match of a rule, overlapping ones too ("I love hiking and I prefer tea")."""
    out, pos = [], 0
    while (m := rule.pattern.search(sentence, pos)) is not None:
        out.append(m)
        pos = m.start() + 1
    return out


def find_hits(sentence: str) -> list[Hit]:
    """Every family's matches, the earlier family's kept where two overlap, in sentence order."""
    hits: list[Hit] = []
    for kind, family in FAMILIES:
        for rule in family:
            for m in _matches(rule, sentence):
                elided = "elided" in m.re.groupindex and m["elided"] is not None
                if elided and not _elided_ok(sentence[: m.start()]):
                    continue
                value, other, verb_topic = clean_value(m["obj"], kind in ("preference", "decision"))
                if not value or len(value) > 80 or BAD_VALUE.search(value) or REDACTED in value:
                    continue
                if kind == "plan" and TRIVIAL_PLAN.match(m["obj"].strip()):
                    continue
                if rule.slot == "name" and value.casefold() in NOT_A_NAME:
                    continue
                if m.groupdict().get("other"):
                    other = other or clean_value(m["other"], True)[0] or None
                end = m.start("obj") + m["obj"].find(value) + len(value)
                if m.end("obj") < m.end():  # the value comes first: "Sam and I split up"
                    end = m.end()
                if not any(m.start() < h.end and h.start < end for h in hits):
                    hits.append(
                        Hit(m.start(), end, kind, rule, m, value, other, verb_topic, elided)
                    )
    hits.sort(key=lambda h: h.start)
    for i, hit in enumerate(hits):
        lead = sentence[(hits[i - 1].end if i else 0) : hit.start]
        if hit.other is None and (before := COMPARE_BEFORE.search(lead)):
            hit.other = clean_value(before["other"], True)[0] or None  # "比起咖啡，我更喜欢茶"
        hit.slot = slot_for(hit.kind, hit)
    return hits


def _joins(first: Hit, second: Hit) -> bool:
    """Two hits of one sentence that are one change: an end and what followed, or one slot
    said twice ("started eating fish again, so I'm pescatarian now")."""
    same = slots.same_slot(first.slot, second.slot) or (
        first.slot is not None
        and second.slot is not None
        and first.slot.split(":")[0] == second.slot.split(":")[0] == "uses"
    )
    if first.rule.ends and not second.rule.ends:
        return same
    return same and slots.single_valued(first.slot) and not second.rule.ends


def merge(hits: list[Hit], sentence: str) -> list[tuple[Hit, int, int]]:
    """The hits as facts with their clause spans; joined hits become one change."""
    spans = [
        (h, (hits[i - 1].end if i else 0), (hits[i + 1].start if i + 1 < len(hits) else None))
        for i, h in enumerate(hits)
    ]
    out: list[tuple[Hit, int, int]] = []
    for hit, _, next_start in spans:
        start = 0 if not out and hit is hits[0] else hit.start  # "These days my favourite …"
        end = max(hit.end, min(hit.match.end(), next_start or len(sentence)))
        if len(hits) == 1:
            end = len(sentence)
        if out and _joins(out[-1][0], hit):
            prev, prev_start, _ = out.pop()
            past = PAST.search(sentence[prev_start : hit.start])
            old = prev.value if prev.rule.ends or past else None
            hit.old_value = hit.old_value or old or prev.old_value
            if hit.slot is None or (prev.slot and hit.slot.startswith("uses:") and prev.rule.ends):
                hit.slot = hit.slot or prev.slot
            start = prev_start
        out.append((hit, start, end))
    if len(out) == 1 and len(hits) > 1:
        hit, _, _ = out[0]
        out[0] = (hit, 0, len(sentence))
    return out
