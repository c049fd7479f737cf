"""``python -m bench context PATH [--budget N]``: the context engine on LoCoMo.

Each conversation is replayed through the engine turn by turn (``ingest`` then
``after_turn`` at the budget, offline extractive summariser). Then, for each
question, the engine assembles a context with the question as query, and the
report gives:

* ``evidence_in_context``: the share of a question's evidence turns whose text
  is in the assembled context verbatim (mean over questions), and the same for
  a truncation baseline in the same run (the newest messages that fit the budget);
* ``evidence_dated``: the share whose day (``[Date: …]``) is in the context too, so
  a turn that says "yesterday" can be dated (what date headers are for);
* ``grep_top10`` / ``search_top10`` / ``either_top10``: the share of questions
  with an evidence turn among the first 10 hits of ``lcm_grep`` (the question as
  query) or ``memory_search``;
* ``kept_entities``: over every leaf summary, the share of the names, numbers and
  dates of its messages (:func:`memoryd.context.summarise.entities`) that the
  summary still holds;
* ``compaction_s_per_1000_messages``: time spent in compaction per 1,000 messages.
"""

from __future__ import annotations

import tempfile
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

from bench.common import CachedEmbedder, mean, run_all
from bench.locomo import CATEGORIES, evidence_ids, load, sessions, turn_text
from memoryd.context import ContextConfig, ContextEngine
from memoryd.context.messages import message_tokens
from memoryd.context.summarise import date_line, entities, names_in
from memoryd.service import MemoryService

DEFAULT_BUDGET = 4000
TOP = 10


def truncation(messages: list[tuple[str, str]], budget: int) -> str:
    """The newest messages that fit ``budget``, as one text."""
    kept, used = [], 0
    for role, content in reversed(messages):
        cost = message_tokens(role, content)
        if used + cost > budget:
            break
        kept.append(content)
        used += cost
    return "\n".join(kept)


def kept_rate(sources: list[str], summary: str) -> tuple[int, int]:
    text = "\n".join(sources)
    wanted = {e.casefold() for e in entities(text, names_in(text))}
    held = summary.casefold()
    return sum(1 for e in wanted if e in held), len(wanted)


def run_conversation(
    sample: dict[str, Any], embedder: CachedEmbedder, budget: int, date_headers: bool
) -> list[dict[str, Any]]:
    conversation = sample["sample_id"]
    texts: dict[str, str] = {}
    days: dict[str, str] = {}
    replayed: list[tuple[str, str]] = []
    compaction_s = 0.0
    kept = total = 0
    with tempfile.TemporaryDirectory(prefix="memoryd-context-") as home:
        svc = MemoryService(home, embedder=embedder)
        try:
            engine = ContextEngine(svc, replace(ContextConfig(), date_headers=date_headers))
            for _, date, turns in sessions(sample["conversation"]):
                for turn in turns:
                    text = turn_text(turn)
                    if not text.strip():
                        continue
                    texts[turn["dia_id"]] = text
                    days[turn["dia_id"]] = date_line(date)
                    replayed.append((turn["speaker"], text))
                    engine.ingest(
                        conversation,
                        {
                            "id": turn["dia_id"],
                            "role": turn["speaker"],
                            "content": text,
                            "created_at": date.isoformat() + "Z",
                        },
                    )
                    report = engine.after_turn(conversation, budget)
                    compaction_s += report.seconds
                    for made in report.made:
                        if made.kind != "leaf":
                            continue
                        sources = [
                            replayed[seq][1] for seq in range(made.first_seq, made.last_seq + 1)
                        ]
                        k, n = kept_rate(sources, made.content)
                        kept, total = kept + k, total + n
            base = truncation(replayed, budget)
            rows = []
            for item in sample["qa"]:
                evidence = evidence_ids(item, set(texts))
                if item.get("category") not in CATEGORIES or not evidence:
                    continue
                question = item["question"]
                assembled = engine.assemble(conversation, budget, query=question)
                assert assembled.estimated_tokens <= budget
                context = (
                    assembled.system_addition
                    + "\n"
                    + "\n".join(str(m["content"]) for m in assembled.messages)
                )
                hits = engine.grep(conversation, question, TOP)
                found = svc.search(question, limit=TOP, touch=False).results
                grep_ok = any(h.kind == "message" and h.id in evidence for h in hits)
                search_ok = any(texts[e] in r.memory.content for r in found for e in evidence)
                rows.append(
                    {
                        "conversation": conversation,
                        "category": item["category"],
                        "evidence_in_context": mean([float(texts[e] in context) for e in evidence]),
                        "truncation": mean([float(texts[e] in base) for e in evidence]),
                        # the turn and its day are both in the context: "yesterday" can be dated
                        "evidence_dated": mean(
                            [float(texts[e] in context and days[e] in context) for e in evidence]
                        ),
                        "grep_top10": float(grep_ok),
                        "search_top10": float(search_ok),
                        "either_top10": float(grep_ok or search_ok),
                    }
                )
        finally:
            svc.close()
    for row in rows:
        row["_kept"], row["_entities"] = kept, total
        row["_compaction_s"], row["_messages"] = compaction_s, len(replayed)
    if rows:  # conversation totals once, on its first row
        for row in rows[1:]:
            row["_kept"] = row["_entities"] = row["_messages"] = 0
            row["_compaction_s"] = 0.0
    return rows


def against_truncation(
    path: Path, rows: list[dict[str, Any]], metrics: dict[str, Any]
) -> dict[str, Any]:
    """The report's data, counts and metrics, with the truncation baseline beside them."""
    truncated = round(mean([r["truncation"] for r in rows]), 4)
    return {
        "data": str(path),
        "questions": len(rows),
        "metrics": metrics,
        "baselines": {"truncation": {"evidence_in_context": truncated}},
        "ratio_to_truncation": round(metrics["evidence_in_context"] / truncated, 2)
        if truncated
        else None,
    }


def run(
    path: Path, limit: int | None, embedder: CachedEmbedder, budget: int, date_headers: bool
) -> dict[str, Any]:
    samples = load(path)[:limit] if limit else load(path)
    rows, wall_s = run_all(
        "context",
        samples,
        partial(run_conversation, budget=budget, date_headers=date_headers),
        embedder,
    )
    names = ["evidence_in_context", "evidence_dated", "grep_top10", "search_top10", "either_top10"]
    metrics: dict[str, Any] = {n: round(mean([r[n] for r in rows]), 4) for n in names}
    kept = sum(r["_kept"] for r in rows)
    total = sum(r["_entities"] for r in rows)
    messages = sum(r["_messages"] for r in rows)
    metrics["kept_entities"] = round(kept / total, 4) if total else 0.0
    metrics["compaction_s_per_1000_messages"] = round(
        sum(r["_compaction_s"] for r in rows) / messages * 1000, 3
    )
    metrics["by_category"] = {
        str(c): {
            "n": len([r for r in rows if r["category"] == c]),
            "evidence_in_context": round(
                mean([r["evidence_in_context"] for r in rows if r["category"] == c]), 4
            ),
            "truncation": round(mean([r["truncation"] for r in rows if r["category"] == c]), 4),
            "evidence_dated": round(
                mean([r["evidence_dated"] for r in rows if r["category"] == c]), 4
            ),
        }
        for c in sorted(CATEGORIES)
    }
    return {
        "benchmark": "context",
        **against_truncation(path, rows, metrics),
        "config": {
            "budget_tokens": budget,
            "date_headers": date_headers,
            "summariser": "extractive (offline)",
            "replay": "ingest + after_turn per turn, speaker as role, session date",
        },
        "wall_s": wall_s,
    }
