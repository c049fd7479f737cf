"""Reflection: one answer synthesised across an agent's memories (seed 001's ``reflect``).

With an LLM, the model answers from the recalled memories and cites them
by number; the numbers become memory ids here. A number the model made up
is removed from the answer and reported in ``refused``; an answer left with
no citation of a memory that exists is not given at all (it would be the
model's invention), and the memories are shown instead.

Without an LLM (or when it fails), reflection says plainly what it has: the
relevant memories, grouped by kind and oldest first within a kind, so a
change of mind reads in the order it happened.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from memoryd.agents.providers.base import MemoryHit
from memoryd.ids import short
from memoryd.inject import CATEGORY_TITLES, inert
from memoryd.llm import LLMClient, LLMError
from memoryd.models import Category, to_utc
from memoryd.prompts import REFLECT_SYSTEM, ReflectAnswer

log = logging.getLogger(__name__)

LLM, OFFLINE = "llm", "offline"
# "[3]" in the model's text: a citation by number
_MARKER = re.compile(r"\s?\[(\d{1,4})\]")
NOTHING = "No stored memory is relevant to this question."
NO_LLM_NOTE = "No language model is configured: these are the relevant memories, not an answer."
UNGROUNDED_NOTE = (
    "The model's answer cited no stored memory, so it is not given: these are the relevant "
    "memories instead."
)
LLM_FAILED_NOTE = "The language model failed ({error}): these are the relevant memories instead."


@dataclass
class Reflection:
    """What ``reflect`` answers: the text, the ids it rests on, and how it was made."""

    query: str
    answer: str
    citations: list[str] = field(default_factory=list)
    memories: list[MemoryHit] = field(default_factory=list)
    mode: str = OFFLINE
    refused: list[int] = field(default_factory=list)  # numbers the model cited that were not shown
    note: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "answer": self.answer,
            "citations": self.citations,
            "mode": self.mode,
            "refused_citations": self.refused,
            "note": self.note,
            "memories": [m.as_dict() for m in self.memories],
        }


def _date(hit: MemoryHit) -> str:
    return hit.created_at.date().isoformat() if hit.created_at else "undated"


def offline(query: str, hits: Sequence[MemoryHit], note: str = NO_LLM_NOTE) -> Reflection:
    """The relevant memories grouped by kind, oldest first within a kind, said as such."""
    if not hits:
        return Reflection(query, NOTHING, note=note)
    lines = [f"Memories relevant to “{inert(query, 200) or query}”, by kind, oldest first:"]
    order = list(Category)
    for category in order:
        group = sorted(
            (h for h in hits if h.category is category),
            key=lambda h: (h.created_at is None, to_utc(h.created_at) if h.created_at else 0),
        )
        if not group:
            continue
        lines.append(f"## {CATEGORY_TITLES[category]}")
        lines += [f"- [{short(h.id)}] ({_date(h)}) {inert(h.content)}" for h in group]
    cited = [h.id for c in order for h in hits if h.category is c]
    return Reflection(query, "\n".join(lines), cited, list(hits), OFFLINE, note=note)


def with_llm(query: str, hits: Sequence[MemoryHit], llm: LLMClient) -> Reflection:
    """The model's answer over ``hits``, its citations checked against what it was shown."""
    if not hits:
        return Reflection(query, NOTHING, mode=LLM)
    shown = "\n".join(f"[{i}] ({_date(h)}) {inert(h.content)}" for i, h in enumerate(hits))
    prompt = [
        {"role": "system", "content": REFLECT_SYSTEM},
        {"role": "user", "content": f"QUESTION: {query}\n\nMEMORIES:\n{shown}"},
    ]
    try:
        answer = llm.complete_json(prompt, ReflectAnswer)
    except LLMError as exc:
        log.warning("reflect: %s; answering with the memories", exc.message)
        return offline(query, hits, LLM_FAILED_NOTE.format(error=exc.message))
    numbers = list(dict.fromkeys([*answer.citations, *map(int, _MARKER.findall(answer.answer))]))
    valid = [n for n in numbers if 0 <= n < len(hits)]
    refused = [n for n in numbers if not 0 <= n < len(hits)]
    if refused:
        log.warning("reflect: the model cited memories that do not exist: %s", refused)
    if not valid:
        result = offline(query, hits, UNGROUNDED_NOTE)
        result.refused = refused
        return result

    def cite(match: re.Match[str]) -> str:
        n = int(match.group(1))
        return f" [{short(hits[n].id)}]" if 0 <= n < len(hits) else ""

    text = _MARKER.sub(cite, answer.answer).strip()
    ids = [hits[n].id for n in valid]
    return Reflection(query, text, ids, [hits[n] for n in valid], LLM, refused)


def reflect(query: str, hits: Sequence[MemoryHit], llm: LLMClient | None) -> Reflection:
    return offline(query, hits) if llm is None else with_llm(query, hits, llm)
