"""LongMemEval_S, session level (BENCHMARKS.md): does the answer session come back?

For each question (abstention ones excepted) an empty store ingests the
question's haystack sessions, in order, each with its date and id, through
the product's own ingest path; then it searches with the question, the
question; "now" is the wall clock (see run_question). Sessions rank by their best result.
"""

from __future__ import annotations

import gzip
import json
import tempfile
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any

from bench.baselines import Baselines
from bench.common import (
    SMART_NOTE,
    SMART_TASK_TIMEOUT_S,
    CachedEmbedder,
    ndcg_at,
    rank_groups,
    run_all,
    summarize,
)
from bench.splits import by_part, only
from memoryd.retrieve.config import DEFAULT_RECIPE, SearchConfig
from memoryd.service import MemoryService

KS = (5, 10)
SEARCH_LIMIT = 50  # results to fetch so that at least 10 sessions are ranked
BASELINE_DEPTH = 200


def load(path: Path) -> list[dict[str, Any]]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as fh:
        data: list[dict[str, Any]] = json.load(fh)
    return [q for q in data if not str(q["question_id"]).endswith("_abs")]


def parse_date(text: str) -> datetime:
    """``2023/05/20 (Sat) 02:21`` → a datetime (UTC)."""
    day, _, clock = text.partition(")")
    return datetime.strptime(f"{day.split(' (')[0]} {clock.strip()}", "%Y/%m/%d %H:%M")


def score(ranked: list[str], answers: set[str]) -> dict[str, float]:
    out: dict[str, float] = {}
    for k in KS:
        top = set(ranked[:k])
        out[f"R@{k}_any"] = float(bool(top & answers))
        out[f"R@{k}_all"] = float(answers <= top)
    out["NDCG@10"] = ndcg_at(ranked, answers, 10)
    return out


def run_question(
    q: dict[str, Any],
    embedder: CachedEmbedder,
    config: SearchConfig,
    baselines: bool,
    ingest_mode: str = "raw",
) -> dict[str, Any]:
    answers = set(q["answer_session_ids"])
    with tempfile.TemporaryDirectory(prefix="memoryd-lme-") as home:
        svc = MemoryService(home, embedder=embedder)
        tasks: list[str] = []
        try:
            for sid, date, session in zip(
                q["haystack_session_ids"], q["haystack_dates"], q["haystack_sessions"], strict=True
            ):
                messages = [
                    {"role": m["role"], "content": m["content"]}
                    for m in session
                    if m.get("content", "").strip()
                ]
                if messages:
                    done = svc.ingest(
                        messages, session_id=sid, dates=parse_date(date), mode=ingest_mode
                    )
                    tasks.append(done.task_id)
            for task_id in tasks if ingest_mode == "smart" else ():
                svc.wait_for_task(task_id, timeout_s=SMART_TASK_TIMEOUT_S)
            # Searched at the wall clock, not at question_date: the data dates some
            # evidence sessions after their question (38 of the 250 dev questions),
            # and memoryd treats a turn dated after "now" as not yet said.
            response = svc.search(q["question"], limit=SEARCH_LIMIT, config=config, touch=False)
        finally:
            svc.close()
    ranked = rank_groups([r.memory.session_id for r in response.results])
    row: dict[str, Any] = {
        "question_id": q["question_id"],
        "type": q["question_type"],
        "answers": sorted(answers),
        "top10": ranked[:10],
        **score(ranked, answers),
    }
    if baselines:
        # the simple verbatim store of the targets: one document per session, user turns only
        texts, groups = [], []
        for sid, session in zip(q["haystack_session_ids"], q["haystack_sessions"], strict=True):
            user = "\n".join(m["content"] for m in session if m["role"] == "user")
            if user.strip():
                texts.append(user)
                groups.append(sid)
        base = Baselines(embedder, texts, groups)
        for name, ranking in (
            ("bm25", base.bm25(q["question"], BASELINE_DEPTH)),
            ("dense", base.dense(q["question"], BASELINE_DEPTH)),
        ):
            row[name] = score(rank_groups(ranking), answers)
    return row


def question_rows(
    q: dict[str, Any],
    embedder: CachedEmbedder,
    *,
    config: SearchConfig,
    baselines: bool,
    ingest_mode: str,
) -> list[dict[str, Any]]:
    return [run_question(q, embedder, config, baselines, ingest_mode)]


def aggregate(rows: list[dict[str, Any]], key: str | None = None) -> dict[str, Any]:
    names = [f"R@{k}_{m}" for k in KS for m in ("any", "all")] + ["NDCG@10"]
    return summarize(rows, names, "type", "R@5_any", key)


def run(
    path: Path,
    limit: int | None,
    embedder: CachedEmbedder,
    config: SearchConfig = DEFAULT_RECIPE,
    baselines: bool = True,
    ingest_mode: str = "raw",
    jobs: int = 1,
    part: str | None = None,
) -> dict[str, Any]:
    """``part``: only the questions of that part of the split (both when ``None``)."""
    questions = only("longmemeval", load(path), lambda q: str(q["question_id"]), part)
    questions = questions[:limit] if limit else questions
    rows, wall_s = run_all(
        "longmemeval",
        questions,
        partial(question_rows, config=config, baselines=baselines, ingest_mode=ingest_mode),
        embedder,
        jobs,
    )
    report: dict[str, Any] = {
        "benchmark": "longmemeval_s_session",
        "data": str(path),
        "questions": len(rows),
        "metrics": aggregate(rows),
        # the tuning and the confirming part (bench/data/splits.json), side by side
        "parts": by_part("longmemeval", rows, "question_id", aggregate),
        "baselines": {n: aggregate(rows, n) for n in ("bm25", "dense")} if baselines else {},
        "baseline_documents": "one per session: its user turns joined",
        "config": {
            "ingest": "turns, user and assistant, each with its session date "
            f"(MemoryService.ingest mode={ingest_mode}"
            + (SMART_NOTE if ingest_mode == "smart" else "")
            + ")",
            "search_limit": SEARCH_LIMIT,
            "now": "wall clock (some evidence sessions are dated after their question)",
            "recipe": config,
        },
        "per_question": rows,
        "wall_s": wall_s,
    }
    return report
