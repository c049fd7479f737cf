"""LoCoMo, turn level (BENCHMARKS.md): are the evidence turns in the top k?

Each conversation is ingested turn by turn through the product's ingest
path, each turn with its session's date and its speaker as the role; then
every QA item of category 1–4 with resolvable evidence is searched.
"""

from __future__ import annotations

import json
import re
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
    rank_groups,
    run_all,
    summarize,
)
from bench.splits import by_part, only
from memoryd.retrieve.config import DEFAULT_RECIPE, SearchConfig
from memoryd.service import MemoryService
from memoryd.text.conversation import transcript_line

KS = (5, 10)
CATEGORIES = {1, 2, 3, 4}
SEARCH_LIMIT = 50
BASELINE_DEPTH = 200
_EVIDENCE_SPLIT = re.compile(r"[\s;]+")


def load(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as fh:
        data: list[dict[str, Any]] = json.load(fh)
    return data


def parse_date(text: str) -> datetime:
    """``1:56 pm on 8 May, 2023`` → a datetime."""
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y")


def sessions(conversation: dict[str, Any]) -> list[tuple[int, datetime, list[dict[str, Any]]]]:
    out = []
    for key, turns in conversation.items():
        match = re.fullmatch(r"session_(\d+)", key)
        if match and isinstance(turns, list):
            number = int(match.group(1))
            out.append((number, parse_date(conversation[f"{key}_date_time"]), turns))
    return sorted(out, key=lambda s: s[0])


def turn_text(turn: dict[str, Any]) -> str:
    """What was said; a shared photo is part of what was said, by its caption."""
    text = str(turn.get("text", ""))
    if turn.get("blip_caption"):
        text += f" [shares a photo: {turn['blip_caption']}]"
    return text


def evidence_ids(item: dict[str, Any], known: set[str]) -> list[str]:
    ids: list[str] = []
    for raw in item.get("evidence", []):
        ids += [e for e in _EVIDENCE_SPLIT.split(str(raw)) if e in known]
    return list(dict.fromkeys(ids))


def session_of(dia_id: str) -> str:
    return dia_id.split(":")[0]


def score(ranked_turns: list[str], evidence: list[str]) -> dict[str, float]:
    out = {f"recall@{k}": len(set(ranked_turns[:k]) & set(evidence)) / len(evidence) for k in KS}
    top_sessions = rank_groups([session_of(t) for t in ranked_turns])[:5]
    out["session_R@5_any"] = float(any(session_of(e) in top_sessions for e in evidence))
    return out


def run_conversation(
    sample: dict[str, Any],
    embedder: CachedEmbedder,
    config: SearchConfig,
    baselines: bool,
    ingest_mode: str = "raw",
    per_session: bool = False,
) -> list[dict[str, Any]]:
    conv = sample["conversation"]
    dia_of_memory: dict[str, str] = {}
    texts, dia_ids = [], []
    rows: list[dict[str, Any]] = []
    tasks: list[str] = []
    with tempfile.TemporaryDirectory(prefix="memoryd-locomo-") as home:
        svc = MemoryService(home, embedder=embedder)
        try:
            for number, date, turns in sessions(conv):
                said = [(turn, text) for turn in turns if (text := turn_text(turn)).strip()]
                calls = [said] if per_session else [[t] for t in said]
                for call in calls:
                    result = svc.ingest(
                        [{"role": turn["speaker"], "content": text} for turn, text in call],
                        session_id=f"{sample['sample_id']}-s{number}",
                        dates=date,
                        mode=ingest_mode,
                    )
                    tasks.append(result.task_id)
                    dia_of_memory.update(_dia_ids(svc, call, result.memory_ids))
                texts += [text for _, text in said]
                dia_ids += [turn["dia_id"] for turn, _ in said]
            for task_id in tasks if ingest_mode == "smart" else ():
                svc.wait_for_task(task_id, timeout_s=SMART_TASK_TIMEOUT_S)
            known = set(dia_ids)
            base = Baselines(embedder, texts, dia_ids) if baselines else None
            for item in sample["qa"]:
                evidence = evidence_ids(item, known)
                if item.get("category") not in CATEGORIES or not evidence:
                    continue
                response = svc.search(
                    item["question"], limit=SEARCH_LIMIT, config=config, touch=False
                )
                ranked = rank_groups([dia_of_memory.get(r.memory.id) for r in response.results])
                row: dict[str, Any] = {
                    "conversation": sample["sample_id"],
                    "question": item["question"],
                    "category": item["category"],
                    "evidence": evidence,
                    "top10": ranked[:10],
                    **score(ranked, evidence),
                }
                if base is not None:
                    row["bm25"] = score(
                        rank_groups(base.bm25(item["question"], BASELINE_DEPTH)), evidence
                    )
                    row["dense"] = score(
                        rank_groups(base.dense(item["question"], BASELINE_DEPTH)), evidence
                    )
                rows.append(row)
        finally:
            svc.close()
    return rows


def _dia_ids(
    svc: MemoryService, call: list[tuple[dict[str, Any], str]], memory_ids: list[str]
) -> dict[str, str]:
    """The dialogue id of each memory a call stored (a turn said twice is stored once)."""
    if len(call) == 1:
        return dict.fromkeys(memory_ids, call[0][0]["dia_id"])
    by_line: dict[str, str] = {}
    for turn, text in call:
        by_line.setdefault(transcript_line(turn["speaker"], text), turn["dia_id"])
    return {m: by_line[svc.get(m).content] for m in memory_ids}


def conversation_rows(
    sample: dict[str, Any],
    embedder: CachedEmbedder,
    *,
    config: SearchConfig,
    baselines: bool,
    ingest_mode: str,
    per_session: bool,
) -> list[dict[str, Any]]:
    return run_conversation(sample, embedder, config, baselines, ingest_mode, per_session)


def aggregate(rows: list[dict[str, Any]], key: str | None = None) -> dict[str, Any]:
    names = [f"recall@{k}" for k in KS] + ["session_R@5_any"]
    return summarize(rows, names, "category", "recall@10", key)


def run(
    path: Path,
    limit: int | None,
    embedder: CachedEmbedder,
    config: SearchConfig = DEFAULT_RECIPE,
    baselines: bool = True,
    ingest_mode: str = "raw",
    jobs: int = 1,
    per_session: bool = False,
    part: str | None = None,
) -> dict[str, Any]:
    """``part``: only the conversations of that part of the split (both when ``None``)."""
    samples = only("locomo", load(path), lambda s: str(s["sample_id"]), part)
    samples = samples[:limit] if limit else samples
    rows, wall_s = run_all(
        "locomo",
        samples,
        partial(
            conversation_rows,
            config=config,
            baselines=baselines,
            ingest_mode=ingest_mode,
            per_session=per_session,
        ),
        embedder,
        jobs,
    )
    return {
        "benchmark": "locomo_turn",
        "data": str(path),
        "questions": len(rows),
        "metrics": aggregate(rows),
        # the tuning and the confirming part (bench/data/splits.json), side by side
        "parts": by_part("locomo", rows, "conversation", aggregate),
        "baselines": {n: aggregate(rows, n) for n in ("bm25", "dense")} if baselines else {},
        "config": {
            "ingest": ("a session per call" if per_session else "a turn per call")
            + ", speaker as role, each turn with its session date "
            f"(MemoryService.ingest mode={ingest_mode}"
            + (SMART_NOTE if ingest_mode == "smart" else "")
            + ")",
            "search_limit": SEARCH_LIMIT,
            "recipe": config,
        },
        "per_question": rows,
        "wall_s": wall_s,
    }
