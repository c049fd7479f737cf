"""First-week conversations: do the current facts win after smart ingest without an LLM?

Short scripted conversations of the kind every user has in their first week
(``bench/data/first_week.json``, English and Chinese): someone moves, changes
job, diet, partner or tools, flips a preference, repeats themselves, or only
makes small talk. Each conversation is ingested session by session through
the product's smart path (rules only, as offline), then each question is
searched with the default recipe. What is counted, per language:

* ``stale_active``: distilled memories still active that state an outdated
  fact (match a question's ``stale`` pattern and none of its ``current`` ones);
* ``small_talk``: distilled memories made of small talk (any in a
  conversation without questions, or one holding a ``chatter`` turn);
* ``duplicates``: pairs of active distilled memories with the same words;
* ``top_current``: share of questions whose first distilled hit states the
  current fact;
* ``stale_turn_above``: questions where a raw turn stating the outdated fact
  ranks above the first distilled hit holding the current one;
* ``chatter_above``: questions where a turn of chatter ranks above it.

The conversations are split in two halves: ``a`` for tuning the rules, ``b``
for confirming that the tuning holds on sentences it was not made from.
"""

from __future__ import annotations

import json
import re
import tempfile
from datetime import datetime
from pathlib import Path
from typing import Any

from bench.common import SMART_TASK_TIMEOUT_S, run_all
from memoryd.embed import Embedder
from memoryd.models import Memory, MemoryType, State
from memoryd.service import MemoryService

DATA = Path(__file__).resolve().parent / "data" / "first_week.json"
SEARCH_LIMIT = 10
DISTILLED = (MemoryType.INSIGHT, MemoryType.PINNED)
_PUNCT = re.compile(r"[\W_]+")


def load(path: Path, half: str | None = None) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as fh:
        conversations: list[dict[str, Any]] = json.load(fh)["conversations"]
    return [c for c in conversations if half is None or c["half"] == half]


def _matches(patterns: list[str], text: str) -> bool:
    return any(re.search(p, text, re.I) for p in patterns)


def _words(text: str) -> str:
    return _PUNCT.sub(" ", text.casefold()).strip()


def _is_current(memory: Memory, question: dict[str, Any]) -> bool:
    return _matches(question["current"], memory.content)


def _is_stale(memory: Memory, question: dict[str, Any]) -> bool:
    return bool(question["stale"]) and (
        _matches(question["stale"], memory.content) and not _is_current(memory, question)
    )


def _is_chatter(memory: Memory, chatter: list[str]) -> bool:
    said = memory.content.partition(": ")[2] if memory.memory_type is MemoryType.SESSION else ""
    return any(said.strip() == c for c in chatter)


def distilled(svc: MemoryService) -> list[Memory]:
    """The active distilled memories: what the user would be told is known."""
    rows, _ = svc.list_memories(limit=1000, state=State.ACTIVE)
    return [m for m in rows if m.memory_type in DISTILLED and m.invalidated_at is None]


def ask(svc: MemoryService, conv: dict[str, Any], question: dict[str, Any]) -> dict[str, Any]:
    """One question: the first distilled hit, and what ranks above the current fact."""
    hits = svc.search(question["q"], limit=SEARCH_LIMIT, touch=False).results
    first = next((h for h in hits if h.memory.memory_type in DISTILLED), None)
    current_at = next(
        (
            i
            for i, h in enumerate(hits)
            if h.memory.memory_type in DISTILLED and _is_current(h.memory, question)
        ),
        len(hits),
    )
    above = [h.memory for h in hits[:current_at]]
    return {
        "conversation": conv["id"],
        "lang": conv["lang"],
        "half": conv["half"],
        "question": question["q"],
        "top_current": first is not None and _is_current(first.memory, question),
        "first_distilled": first.memory.content if first else None,
        "stale_turn_above": any(
            m.memory_type is MemoryType.SESSION and _is_stale(m, question) for m in above
        ),
        "chatter_above": any(_is_chatter(m, conv.get("chatter", [])) for m in above),
        "ranked": [f"{h.score:.3f} {h.memory.memory_type.value}: {h.memory.content}" for h in hits],
    }


def run_conversation(conv: dict[str, Any], embedder: Embedder | None) -> list[dict[str, Any]]:
    """Ingest the conversation's sessions in order (smart, rules only), then ask."""
    with tempfile.TemporaryDirectory(prefix="memoryd-first-week-") as home:
        svc = MemoryService(home, embedder=embedder)
        try:
            for number, session in enumerate(conv["sessions"]):
                result = svc.ingest(
                    [{"role": role, "content": text} for role, text in session["turns"]],
                    session_id=f"{conv['id']}-{number}",
                    dates=datetime.fromisoformat(session["date"]),
                    mode="smart",
                )
                svc.wait_for_task(result.task_id, timeout_s=SMART_TASK_TIMEOUT_S)
            memories = distilled(svc)
            chatter = conv.get("chatter", [])
            questions = conv["questions"]
            seen: dict[str, Memory] = {}
            duplicates = 0
            for m in memories:
                key = _words(m.content)
                duplicates += key in seen
                seen.setdefault(key, m)
            summary = {
                "conversation": conv["id"],
                "lang": conv["lang"],
                "half": conv["half"],
                "kind": "memories",
                "memories": [m.content for m in memories],
                "stale_active": [
                    m.content for m in memories if any(_is_stale(m, q) for q in questions)
                ],
                "small_talk": [
                    m.content
                    for m in memories
                    if not questions or any(c in m.content or c in m.l1_overview for c in chatter)
                ],
                "duplicates": duplicates,
            }
            return [summary] + [{**ask(svc, conv, q), "kind": "question"} for q in questions]
        finally:
            svc.close()


def aggregate(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The counts of the module docstring, for one language (or all rows given)."""
    convs = [r for r in rows if r["kind"] == "memories"]
    qs = [r for r in rows if r["kind"] == "question"]
    return {
        "conversations": len(convs),
        "questions": len(qs),
        "stale_active": sum(len(r["stale_active"]) for r in convs),
        "small_talk": sum(len(r["small_talk"]) for r in convs),
        "duplicates": sum(r["duplicates"] for r in convs),
        "top_current": round(sum(r["top_current"] for r in qs) / len(qs), 4) if qs else 0.0,
        "stale_turn_above": sum(r["stale_turn_above"] for r in qs),
        "chatter_above": sum(r["chatter_above"] for r in qs),
    }


def failures(rows: list[dict[str, Any]]) -> list[str]:
    """One line per thing that went wrong, to read before tuning anything."""
    out: list[str] = []
    for r in rows:
        if r["kind"] == "memories":
            out += [f"{r['conversation']}: stale active: {m}" for m in r["stale_active"]]
            out += [f"{r['conversation']}: small talk kept: {m}" for m in r["small_talk"]]
            if r["duplicates"]:
                out.append(f"{r['conversation']}: {r['duplicates']} duplicate(s)")
            continue
        for flag in ("top_current", "stale_turn_above", "chatter_above"):
            if r[flag] != (flag == "top_current"):
                out.append(
                    f"{r['conversation']}: {flag} {r[flag]} for {r['question']!r} "
                    f"(first distilled: {r['first_distilled']!r})"
                )
    return out


def run(path: Path, half: str | None, embedder: Embedder | None) -> dict[str, Any]:
    conversations = load(path, half)
    rows, wall_s = run_all("first week", conversations, run_conversation, embedder)
    langs = sorted({r["lang"] for r in rows})
    return {
        "benchmark": "first_week",
        "data": str(path),
        "half": half or "all",
        "metrics": {lang: aggregate([r for r in rows if r["lang"] == lang]) for lang in langs},
        "failures": failures(rows),
        "config": {"ingest": "smart, rules only (no LLM)", "search_limit": SEARCH_LIMIT},
        "per_question": rows,
        "wall_s": wall_s,
    }
