"""``bench context`` on LongMemEval: each question's sessions are one conversation.

The sessions are replayed through the engine in order (each turn dated by its
session), at the budget; then the engine assembles a context with the question
as query. The evidence turns are those LongMemEval marks ``has_answer``;
``evidence_in_context`` and ``evidence_dated`` are as for LoCoMo
(:mod:`bench.context`), beside the truncation baseline, by question type.
Questions without a marked turn are not scored.
"""

from __future__ import annotations

import tempfile
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

from bench.common import CachedEmbedder, mean, run_all
from bench.context import against_truncation, truncation
from bench.longmemeval import load, parse_date
from memoryd.context import ContextConfig, ContextEngine
from memoryd.context.summarise import date_line
from memoryd.service import MemoryService


def run_question(
    q: dict[str, Any], embedder: CachedEmbedder, budget: int, date_headers: bool
) -> list[dict[str, Any]]:
    texts: list[tuple[str, str]] = []
    evidence: list[tuple[str, str]] = []  # (text, its day)
    with tempfile.TemporaryDirectory(prefix="memoryd-context-lme-") as home:
        svc = MemoryService(home, embedder=embedder)
        try:
            engine = ContextEngine(svc, replace(ContextConfig(), date_headers=date_headers))
            for when, session in zip(q["haystack_dates"], q["haystack_sessions"], strict=True):
                date = parse_date(when)
                for turn in session:
                    content = str(turn.get("content") or "")
                    if not content.strip():
                        continue
                    engine.ingest(
                        "q",
                        {
                            "role": turn["role"],
                            "content": content,
                            "created_at": date.isoformat() + "Z",
                        },
                    )
                    engine.after_turn("q", budget)
                    texts.append((turn["role"], content))
                    if turn.get("has_answer"):
                        evidence.append((content, date_line(date)))
            if not evidence:
                return []
            assembled = engine.assemble("q", budget, query=q["question"])
            assert assembled.estimated_tokens <= budget
            context = (
                assembled.system_addition
                + "\n"
                + "\n".join(str(m["content"]) for m in assembled.messages)
            )
            base = truncation(texts, budget)
        finally:
            svc.close()
    return [
        {
            "question_id": q["question_id"],
            "question_type": q["question_type"],
            "evidence_in_context": mean([float(t in context) for t, _ in evidence]),
            "evidence_dated": mean([float(t in context and d in context) for t, d in evidence]),
            "truncation": mean([float(t in base) for t, _ in evidence]),
        }
    ]


def run(
    path: Path,
    limit: int | None,
    embedder: CachedEmbedder,
    budget: int,
    date_headers: bool,
    question_type: str | None,
) -> dict[str, Any]:
    questions = load(path)
    if question_type:
        questions = [q for q in questions if q["question_type"] == question_type]
    questions = questions[:limit] if limit else questions
    rows, wall_s = run_all(
        "context-lme",
        questions,
        partial(run_question, budget=budget, date_headers=date_headers),
        embedder,
    )
    names = ("evidence_in_context", "evidence_dated", "truncation")
    types = sorted({r["question_type"] for r in rows})
    metrics: dict[str, Any] = {n: round(mean([r[n] for r in rows]), 4) for n in names[:2]}
    metrics["by_type"] = {
        t: {
            "n": len([r for r in rows if r["question_type"] == t]),
            **{n: round(mean([r[n] for r in rows if r["question_type"] == t]), 4) for n in names},
        }
        for t in types
    }
    return {
        "benchmark": "context_longmemeval",
        **against_truncation(path, rows, metrics),
        "config": {
            "budget_tokens": budget,
            "date_headers": date_headers,
            "question_type": question_type,
            "summariser": "extractive (offline)",
            "replay": "each question's sessions as one conversation, ingest + after_turn per turn",
        },
        "per_question": rows,
        "wall_s": wall_s,
    }
