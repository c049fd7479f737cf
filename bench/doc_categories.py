"""Which category an imported note is filed under when no LLM reads it.

Two labelled sets of short Markdown notes (``bench/data/doc_categories_*.json``),
six categories, English and Chinese: ``tune`` was written beside the
descriptions of :mod:`memoryd.imports.category`, ``confirm`` by someone who
had not seen them. The share filed right, per set and per category, beside
the share the old constant (every note under ``entities``) got.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path
from typing import Any

from memoryd.embed.client import Embedder
from memoryd.imports.category import CategoryGuess
from memoryd.models import Category

DATA = Path(__file__).parent / "data"
HALVES = ("tune", "confirm")


def run(embedder: Embedder, halves: tuple[str, ...] = HALVES) -> dict[str, Any]:
    guess = CategoryGuess(embedder.embed)
    started = time.perf_counter()
    metrics: dict[str, Any] = {}
    for half in halves:
        docs = json.loads((DATA / f"doc_categories_{half}.json").read_text(encoding="utf-8"))
        docs = docs["documents"]
        got = guess.many([d["text"] for d in docs])
        right: Counter[str] = Counter()
        total: Counter[str] = Counter()
        for doc, category in zip(docs, got, strict=True):
            total[doc["category"]] += 1
            right[doc["category"]] += category.value == doc["category"]
        metrics[half] = {
            "n": len(docs),
            "accuracy": round(sum(right.values()) / len(docs), 3),
            "constant_entities": round(total[Category.ENTITIES.value] / len(docs), 3),
            "by_category": {c: round(right[c] / total[c], 3) for c in sorted(total)},
        }
    return {
        "benchmark": "doc-categories",
        "questions": sum(m["n"] for m in metrics.values()),
        "metrics": metrics,
        "config": {"halves": list(halves)},
        "wall_s": round(time.perf_counter() - started, 1),
    }
