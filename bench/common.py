"""What every benchmark shares: a persistent embedding cache, metrics, the report."""

from __future__ import annotations

import functools
import hashlib
import json
import math
import multiprocessing
import os
import platform
import sqlite3
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, is_dataclass
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
from rich.progress import Progress
from rich.table import Table

from memoryd.embed import Embedder, Vectors
from memoryd.embed.local import LocalEmbedder
from memoryd.periodic import exit_with

T = TypeVar("T")
R = TypeVar("R")

ROOT = Path(__file__).resolve().parent.parent
SHARED_DATA = ROOT.parent / "shared" / "data"
# where reports, the embedding cache and the speed stores go
WORK_DIR = Path(os.environ.get("MEMORYD_BENCH_DIR", ROOT / "bench" / "reports"))
CACHE_DIR = WORK_DIR / "cache"

# how often a --jobs worker looks whether the run that started it is still there
PARENT_CHECK_S = 0.5
# --ingest smart: how long one smart-ingest task may take, and what the report says it did
SMART_TASK_TIMEOUT_S = 600
SMART_NOTE = ": the raw turns and the memories smart ingest distils from them"


class CachedEmbedder(Embedder):
    """Wraps a model with an on-disk cache shared by every question of a run.

    LongMemEval re-ingests the same haystack sessions for many questions; the
    vectors do not change, so they are computed once per machine. The store's
    own cache is per home, and each question starts from an empty home.
    """

    def __init__(self, inner: Embedder, path: Path | None = None) -> None:
        self.inner = inner
        self.name = inner.name
        self.dim = inner.dim
        path = path or CACHE_DIR / f"{inner.name}.sqlite"
        path.parent.mkdir(parents=True, exist_ok=True)
        # timeout: worker processes of --jobs write to the same cache; autocommit, so a
        # write is one BEGIN IMMEDIATE (which waits for another writer) and never the
        # upgrade of a read snapshot (which fails at once with "database is locked")
        self._db = sqlite3.connect(path, check_same_thread=False, timeout=120, isolation_level=None)
        self._lock = threading.Lock()  # one connection, shared by the threads of a process
        self._db.execute("PRAGMA journal_mode = WAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS v (h BLOB PRIMARY KEY, vec BLOB NOT NULL) WITHOUT ROWID"
        )
        self.computed = 0

    def _embed(self, texts: Sequence[str]) -> Vectors:
        keys = [hashlib.sha256(t.encode()).digest() for t in texts]
        found: dict[bytes, bytes] = {}
        unique = list(dict.fromkeys(keys))
        with self._lock:
            for start in range(0, len(unique), 500):
                chunk = unique[start : start + 500]
                marks = ",".join("?" * len(chunk))
                found.update(self._db.execute(f"SELECT h, vec FROM v WHERE h IN ({marks})", chunk))
        missing = {k: t for k, t in zip(keys, texts, strict=True) if k not in found}
        if missing:
            vectors = self.inner.embed(list(missing.values()))
            self.computed += len(missing)
            rows = [(k, v.tobytes()) for k, v in zip(missing, vectors, strict=True)]
            with self._lock:
                self._db.execute("BEGIN IMMEDIATE")
                try:
                    self._db.executemany("INSERT OR IGNORE INTO v VALUES (?, ?)", rows)
                except BaseException:
                    self._db.execute("ROLLBACK")
                    raise
                self._db.execute("COMMIT")
            found.update(rows)
        return np.stack([np.frombuffer(found[k], dtype=np.float32) for k in keys])

    def embed_query(self, text: str) -> Vectors:
        # a model with a query prefix embeds a search unlike a memory: not from the cache
        if type(self.inner).embed_query is Embedder.embed_query:
            return self.embed_one(text)
        return self.inner.embed_query(text)


def bench_model(threads: int | None = None) -> Embedder:
    """The model ``MEMORYD_EMBEDDER`` names, as memoryd would load it: the bundled one
    unless told otherwise (``multilingual`` measures the multilingual model)."""
    from memoryd.config import Settings
    from memoryd.embed import create_embedder

    settings = Settings()
    if settings.embedder == "local":
        return LocalEmbedder(threads=threads)
    return create_embedder(settings)


def bench_model_name() -> str:
    """The name of :func:`bench_model`'s model, for reports, without loading it."""
    from memoryd.config import Settings
    from memoryd.embed import local, multilingual

    settings = Settings()
    names = {"local": local.MODEL_NAME, "multilingual": multilingual.MODEL_NAME}
    return names.get(settings.embedder, settings.embed_model)


def bench_embedder() -> CachedEmbedder:
    return CachedEmbedder(bench_model())


def dcg(relevances: Sequence[int]) -> float:
    return sum(rel / math.log2(i + 2) for i, rel in enumerate(relevances))


def ndcg_at(ranked: Sequence[str], relevant: set[str], k: int) -> float:
    gains = [1 if r in relevant else 0 for r in ranked[:k]]
    ideal = dcg([1] * min(len(relevant), k))
    return dcg(gains) / ideal if ideal else 0.0


def rank_groups(ids: Sequence[str | None]) -> list[str]:
    """Distinct groups in order of their best-ranked member (a session's rank is its best)."""
    return list(dict.fromkeys(i for i in ids if i is not None))


@functools.cache
def git_commit() -> str:
    """The commit the run measures, read once, when the run starts (``bench/__main__``):
    a commit made while a long run goes on is not the code it ran."""
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        )
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        return out.stdout.strip() + ("-dirty" if dirty.strip() else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def plain(value: Any) -> Any:
    if is_dataclass(value) and not isinstance(value, type):
        return {k: plain(v) for k, v in asdict(value).items()}
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


def write_report(out: Path, report: dict[str, Any]) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(plain(report), indent=2, ensure_ascii=False) + "\n")


def machine() -> dict[str, Any]:
    return {
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "machine": platform.machine(),
        # the machine's 1, 5 and 15 minute load averages as the run ended (its own load included)
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }


class Timer:
    def __enter__(self) -> Timer:
        self.start = time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        self.seconds = time.perf_counter() - self.start


def mean(values: Sequence[float]) -> float:
    return round(sum(values) / len(values), 4) if values else 0.0


def run_all(
    label: str,
    items: Sequence[T],
    one: Callable[[T, Any], list[R]],
    embedder: Embedder | None,
    jobs: int = 1,
) -> tuple[list[R], float]:
    """Every item through ``one(item, embedder)`` with a progress bar: the rows
    (in the items' order) and the wall time.

    ``jobs`` > 1 runs items in that many worker processes, each with its own
    model session on one thread and the shared on-disk cache: on a machine with
    many cores that is how a cold LongMemEval run finishes in minutes. ``one``
    must then be picklable (a module-level function or a ``functools.partial``).
    """
    rows: list[R] = []
    with Timer() as timer, Progress() as bar:
        task = bar.add_task(label, total=len(items))
        if jobs <= 1:
            for item in items:
                rows += one(item, embedder)
                bar.advance(task)
        else:
            context = multiprocessing.get_context("spawn")
            pool = ProcessPoolExecutor(
                jobs, mp_context=context, initializer=_worker_init, initargs=(os.getpid(),)
            )
            try:
                futures = [pool.submit(_worker_run, one, item) for item in items]
                for future in as_completed(futures):
                    future.result()  # a failed item fails the run now, not at the end
                    bar.advance(task)
            except BaseException:  # a failed item, Ctrl-C, SIGTERM: the rest is not run
                pool.shutdown(wait=False, cancel_futures=True)
                raise
            pool.shutdown()
            for future in futures:
                rows += future.result()
    return rows, round(timer.seconds, 1)


_WORKER_EMBEDDER: CachedEmbedder | None = None


def _worker_init(parent: int) -> None:
    """A worker whose run is gone (killed, ``kill -9`` too) exits at once, instead of
    computing the rest of its items for no one on the cores others measure on."""
    global _WORKER_EMBEDDER
    exit_with(parent, PARENT_CHECK_S)
    _WORKER_EMBEDDER = CachedEmbedder(bench_model(threads=1))


def _worker_run(one: Callable[[T, Any], list[R]], item: T) -> list[R]:
    assert _WORKER_EMBEDDER is not None, "worker started without its initializer"
    return one(item, _WORKER_EMBEDDER)


def summarize(
    rows: Sequence[dict[str, Any]],
    names: Sequence[str],
    group: str,
    group_metric: str,
    key: str | None = None,
) -> dict[str, Any]:
    """Mean of each metric over ``rows`` (or their ``key`` sub-dict, a baseline),
    and ``group_metric`` broken down by the rows' ``group`` field."""

    def pick(r: dict[str, Any]) -> dict[str, Any]:
        return r if key is None else r[key]

    metrics: dict[str, Any] = {n: mean([pick(r)[n] for r in rows]) for n in names}
    groups: dict[str, list[float]] = {}
    for r in rows:
        groups.setdefault(str(r[group]), []).append(pick(r)[group_metric])
    metrics[f"by_{group}"] = {
        g: {group_metric: mean(v), "n": len(v)} for g, v in sorted(groups.items())
    }
    return metrics


def percentiles(samples: Sequence[float]) -> dict[str, float]:
    """p50, p95 and p99 of latencies in ms, to the hundredth."""
    p50, p95, p99 = np.percentile(np.asarray(samples), [50, 95, 99])
    return {"p50": round(float(p50), 2), "p95": round(float(p95), 2), "p99": round(float(p99), 2)}


def one_row_table(title: str, cells: dict[str, Any]) -> Table:
    """A report's figures as one row under their column names."""
    table = Table(title=title)
    for column in cells:
        table.add_column(column, justify="right")
    table.add_row(*(str(v) for v in cells.values()))
    return table


def percentile_table(title: str, first: str, rows: dict[str, dict[str, float]]) -> Table:
    """A table of p50 / p95 / p99 in ms, one row per name (``first`` heads the names)."""
    table = Table(title=title)
    for column in (first, "p50 ms", "p95 ms", "p99 ms"):
        table.add_column(column, justify="right")
    for name, row in rows.items():
        table.add_row(name, *(str(row[k]) for k in ("p50", "p95", "p99")))
    return table
