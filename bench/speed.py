"""Speed: ingest throughput and search latency from 1k to 1M memories.

Each store is built once with the bulk load path (vectors from the bench's
embedding cache, one transaction per batch) and kept under
``bench/reports/stores/`` for the next run. Measured at each size, in one
process, single client:

* raw ingest through ``MemoryService.ingest`` (the fast path every capture
  takes), in turns/s, beside the bare embedder on the same texts (the
  physical limit), and smart ingest (the server's default: the fast path,
  then distillation by the rules) timed until its tasks are done;
* direct adds through ``MemoryService.add``, in memories/s;
* search latency p50/p95/p99 with the query embedding included (no query
  repeats in a run, so the cache of recent query vectors never answers;
  its hit rate is reported to show it), beside a plain dense scan and a
  plain FTS5 BM25 query over the same rows; then the same queries again,
  every vector from that cache, as a row of its own;
* peak RSS of the process through that work (before the bench's own exact
  scans for the baselines and the graph's recall, which read every vector)
  and the store's size on disk, whole and for each memory row it holds;
* the first search of a new process on the store (opening it, loading the
  model and the vector index, building or loading the HNSW graph), twice:
  the first process finds no saved graph or rows and reads every row from
  SQLite, the second loads the graph and the rows the first saved; and,
  where the space has a graph, the recall of its top 10 against the exact
  top 10; then once more after the workload's writes (a restart: the saved
  rows caught up on them, the saved graph patched).

Past ``--embed-limit`` rows the store is filled with synthetic vectors:
the first ``embed-limit`` texts are embedded by the model (cached), every
further row is a copy of one of them with a little Gaussian noise,
renormalised, so the space keeps the clusters real text has (random unit
vectors have none and are the worst case for a graph). The report says
how many rows were synthetic.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import sqlite3
import subprocess
import sys
import time
from collections.abc import Sequence
from contextlib import closing, nullcontext
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from bench.common import (
    SMART_TASK_TIMEOUT_S,
    WORK_DIR,
    Timer,
    bench_embedder,
    bench_model,
    bench_model_name,
    percentiles,
)
from bench.synthetic import queries, sentences
from memoryd.config import load_settings
from memoryd.embed import Embedder
from memoryd.embed.local import MODEL_NAME as BUNDLED_MODEL
from memoryd.models import Category, Memory, MemoryType
from memoryd.service import MemoryService
from memoryd.store import DB_FILENAME
from memoryd.store.fts import build_query
from memoryd.store.hnsw_index import DEFAULT_HNSW_THRESHOLD
from memoryd.store.sqlite import SQLiteStore

STORES = WORK_DIR / "stores"
BULK_BATCH = 5_000
INGEST_TURNS = 256  # fresh turns ingested at each size (uncached: the model really runs)
DIRECT_ADDS = 64
# rows past this many get synthetic vectors (perturbed copies of embedded ones)
EMBED_LIMIT = 200_000
SYNTHETIC_NOISE = 0.05  # per-dimension standard deviation before renormalising
RECALL_QUERIES = 50


def _disk_mb(home: Path) -> float:
    """The database with its WAL and its saved graphs and rows (``memoryd.db-graphs/``), as
    the disk holds them: allocated blocks (the spare room of a rows file is a hole)."""
    files = (p for p in home.glob("memoryd.db*/**/*") if p.is_file())
    database = (p for p in home.glob("memoryd.db*") if p.is_file())
    return round(sum(p.stat().st_blocks * 512 for p in (*database, *files)) / 2**20, 1)


def _sqlite_rows(home: Path) -> int:
    """Every memory row of the home, current or not: what its disk holds."""
    with closing(sqlite3.connect(home / DB_FILENAME)) as conn:
        return int(conn.execute("SELECT COUNT(*) FROM memories").fetchone()[0])


def _per_memory(disk_mb: float, rows: int) -> int:
    """The store's bytes on disk for each memory row it holds (its workload's adds too)."""
    return round(disk_mb * 2**20 / max(rows, 1))


def _peak_rss_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def build_store(size: int, bar: Progress, embed_limit: int = EMBED_LIMIT) -> Path:
    """A home holding ``size`` synthetic memories, built once and reused."""
    home = STORES / (f"n{size}" if size <= embed_limit else f"n{size}-e{embed_limit}")
    model = bench_model_name()
    if model != BUNDLED_MODEL:  # a store holds one model's vectors
        home = home.with_name(f"{home.name}-{model}")
    marker = home / "complete"
    if marker.exists():
        return home
    shutil.rmtree(home, ignore_errors=True)
    embedder = bench_embedder()
    with MemoryService(home, embedder=embedder) as svc:
        fill(svc, size, bar, embed_limit, embedder)
    marker.write_text("ok\n")
    return home


def fill(
    svc: MemoryService, size: int, bar: Progress, embed_limit: int, embedder: Embedder
) -> None:
    """Bulk-load ``size`` synthetic memories through the store's insert path, a batch a
    transaction (whatever the backend): the texts of :func:`sentences`, their cached vectors."""
    texts = sentences(min(size, embed_limit))
    rng = np.random.default_rng(size)
    task = bar.add_task(f"building {size:,} memories", total=size)
    for start in range(0, size, BULK_BATCH):
        picks = range(start, min(start + BULK_BATCH, size))
        # past the limit: the text and vector of an embedded row, the vector moved a little
        chunk = [texts[i] if i < embed_limit else f"{texts[i % embed_limit]} ({i})" for i in picks]
        vectors = embedder.embed([texts[i % embed_limit] for i in picks])
        copies = np.asarray([i >= embed_limit for i in picks])
        if copies.any():
            moved = vectors[copies] + rng.normal(
                0, SYNTHETIC_NOISE, (int(copies.sum()), vectors.shape[1])
            ).astype(np.float32)
            vectors[copies] = moved / np.linalg.norm(moved, axis=1, keepdims=True)
        memories = [
            Memory(
                content=t,
                l2_content=t,
                category=Category.EVENTS,
                memory_type=MemoryType.INSIGHT,
                tenant_id=svc.tenant_id,
                space_id=svc.space_id,
            )
            for t in chunk
        ]
        svc.store.insert_memories(memories, list(vectors), actor="bench")
        bar.advance(task, len(chunk))


FIRST_SEARCH = """
import json, sys, time
started = time.perf_counter()
from memoryd.config import load_settings
from memoryd.service import MemoryService
from memoryd.store import DB_FILENAME
svc = MemoryService(settings=load_settings(sys.argv[1], hnsw_threshold=int(sys.argv[2])))
svc.search("where does my sister live", touch=False)
space = svc.store.index.space(svc.space_id)
took = time.perf_counter() - started
graph = space.graph_origin
if space.aside is not None:  # built aside: searched exactly meanwhile; kept for the next
    space.aside.result()
    svc.search("where does my sister live", touch=False)
    graph = f"built aside in {time.perf_counter() - started:.0f} s"
print(json.dumps({"s": took, "graph": graph, "rows": space.rows_origin}))
svc.close()
"""


def first_search(home: Path, threshold: int) -> tuple[float, str, str]:
    """Seconds from a new process's start to its first search's answer, and where its
    graph ("built", "loaded", "": none) and its rows ("store", "saved") came from."""
    done = subprocess.run(
        [sys.executable, "-c", FIRST_SEARCH, str(home), str(threshold)],
        capture_output=True,
        text=True,
        check=True,
    )
    answer = json.loads(done.stdout.strip().splitlines()[-1])
    return round(float(answer["s"]), 2), str(answer["graph"]), str(answer["rows"])


def graph_recall(svc: MemoryService, model: Embedder) -> float | None:
    """Top-10 recall of the space's HNSW graph against the exact scan (None: no graph)."""
    index = svc.engine.sqlite_store.index  # the in-process graph: SQLite only
    assert index is not None, "bind the model first"
    space = index.space(svc.space_id)
    if space.graph is None:
        return None
    found = 0
    for q in model.embed(queries(RECALL_QUERIES, seed=99)):
        scores = space.matrix[: space.size] @ q
        exact = {int(space.rowids[i]) for i in np.argpartition(-scores, 10)[:10]}
        hits = space._search_graph(q, 10, None) or []
        found += len(exact & {r for r, _ in hits})
    return round(found / (10 * RECALL_QUERIES), 4)


def workload(svc: MemoryService, size: int, n_queries: int, model: Embedder) -> dict[str, Any]:
    """What every backend is measured on: raw, smart and direct writes, then searches."""
    svc.search("warm up", touch=False)  # load the vector index once, as a server would
    index = svc.engine.store.index if isinstance(svc.engine.store, SQLiteStore) else None
    aside = None if index is None else index.space(svc.space_id).aside
    if aside is not None:  # a large space's graph, built aside: searches measured with it
        aside.result()
        svc.search("warm up", touch=False)
    fresh = [f"[{size}] {t}" for t in sentences(INGEST_TURNS, seed=1000 + size)]
    with Timer() as bare:
        model.embed(fresh)
    with Timer() as ingest:
        for start in range(0, len(fresh), 16):
            svc.ingest(
                [{"role": "user", "content": t} for t in fresh[start : start + 16]],
                session_id=f"speed-{start}",
            )
    said = [f"[{size}] smart {t}" for t in sentences(INGEST_TURNS, seed=3000 + size)]
    with Timer() as smart:  # the server's default path: stored, then distilled, offline
        tasks = [
            svc.ingest(
                [{"role": "user", "content": t} for t in said[start : start + 16]],
                session_id=f"smart-{start}",
                mode="smart",
            ).task_id
            for start in range(0, len(said), 16)
        ]
        for task_id in tasks:
            svc.wait_for_task(task_id, timeout_s=SMART_TASK_TIMEOUT_S)
    adds = [f"[{size}] direct {t}" for t in sentences(DIRECT_ADDS, seed=2000 + size)]
    with Timer() as direct:
        for text in adds:
            svc.add(text)
    asked = queries(n_queries, seed=7000 + size)  # never asked before in this run
    hits_before, misses_before = svc.engine.retriever.query_cache()
    search = percentiles(_search_ms(svc, asked))
    hits, misses = svc.engine.retriever.query_cache()
    # the same queries again: each vector from the cache (an agent asking again, a hook)
    cached = percentiles(_search_ms(svc, asked))
    return {
        "ingest_per_s": round(len(fresh) / ingest.seconds, 1),
        "bare_embed_per_s": round(len(fresh) / bare.seconds, 1),
        "ingest_vs_bare": round(bare.seconds / ingest.seconds, 3),
        "smart_ingest_per_s": round(len(said) / smart.seconds, 1),
        "direct_add_per_s": round(len(adds) / direct.seconds, 1),
        "search_p50_ms": search["p50"],
        "search_p95_ms": search["p95"],
        "search_p99_ms": search["p99"],
        "query_cache_hit_rate": round(
            (hits - hits_before) / max(1, hits - hits_before + misses - misses_before), 3
        ),
        "search_cached_p50_ms": cached["p50"],
        "search_cached_p95_ms": cached["p95"],
        # the peers' names for the same two: uncached (the query embedded) and the store's
        # part (its vector given)
        "e2e_search_p95_ms": search["p95"],
        "store_search_p95_ms": cached["p95"],
    }


def _search_ms(svc: MemoryService, asked: list[str]) -> list[float]:
    """Each search's latency in ms, its query embedded unless the cache holds it."""
    latencies = []
    for q in asked:
        started = time.perf_counter()
        svc.search(q, limit=10, touch=False)
        latencies.append((time.perf_counter() - started) * 1000)
    return latencies


def baselines(svc: MemoryService, n_queries: int, model: Embedder) -> dict[str, Any]:
    """A plain dense scan of the in-process matrix and a plain FTS5 BM25 query (SQLite)."""
    dense_ms, bm25_ms = [], []
    matrix = svc.engine.sqlite_store.index.space(svc.space_id)  # type: ignore[union-attr]
    for q in queries(n_queries):
        started = time.perf_counter()
        scores = matrix.matrix[: matrix.size] @ model.embed_one(q)
        np.argpartition(-scores, 10)[:10]
        dense_ms.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        match = build_query(q).words
        if match:
            svc.engine.sqlite_store.conn.execute(
                "SELECT rowid FROM memories_fts WHERE memories_fts MATCH ? "
                "ORDER BY bm25(memories_fts) LIMIT 10",
                (match,),
            ).fetchall()
        bm25_ms.append((time.perf_counter() - started) * 1000)
    return {
        "baseline_dense_p95_ms": percentiles(dense_ms)["p95"],
        "baseline_bm25_p95_ms": percentiles(bm25_ms)["p95"],
    }


def measure(
    size: int, home: Path, n_queries: int, model: Embedder, threshold: int
) -> dict[str, Any]:
    work = home.parent / f"{home.name}-run"
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(home, work)
    out: dict[str, Any] = {"size": size, "backend": "sqlite"}
    out["first_search_s"], origin, rows = first_search(work, threshold)
    out["first_search_saved_graph_s"], again, rows_again = first_search(work, threshold)
    out["graph"] = f"{origin}, then {again}" if origin else "none"
    out["index_rows"] = f"{rows}, then {rows_again}"  # saved past ROWS_FILE_MIN rows
    settings = load_settings(work, hnsw_threshold=threshold)
    with MemoryService(settings=settings, embedder=model) as svc:
        out.update(workload(svc, size, n_queries, model))
        # memoryd's own peak: the bench's exact scans below read every vector of the space
        out["peak_rss_mb"] = _peak_rss_mb()
        out.update(baselines(svc, n_queries, model))
        out["hnsw_recall_at_10"] = graph_recall(svc, model)
    # a restart after the workload's writes: the saved rows caught up, the graph patched
    out["first_search_after_writes_s"], _, _ = first_search(work, threshold)
    out["disk_mb"] = _disk_mb(work)
    out["disk_bytes_per_memory"] = _per_memory(out["disk_mb"], _sqlite_rows(work))
    shutil.rmtree(work, ignore_errors=True)
    return out


def measure_postgres(
    size: int, server: str, n_queries: int, model: Embedder, embed_limit: int
) -> dict[str, Any]:
    """The same workload on a copy of the size's PostgreSQL store (``bench.pg``)."""
    from bench import pg

    with Progress() as bar, Timer() as build:
        template = pg.build_pg_store(server, size, bar, embed_limit)
    copy = f"{template}_run"
    url = pg.copy_database(server, template, copy)
    out: dict[str, Any] = {"size": size, "backend": "postgres", "build_s": round(build.seconds)}
    try:
        settings = load_settings(pg.pg_home(copy), database_url=url)
        with MemoryService(settings=settings, embedder=model) as svc:
            out.update(workload(svc, size, n_queries, model))
        out["disk_mb"] = pg.database_mb(url)
        out["disk_bytes_per_memory"] = _per_memory(out["disk_mb"], pg.memory_rows(url))
    finally:
        pg.drop_database(server, copy)
    return out


def run(
    sizes: list[int],
    n_queries: int,
    embed_limit: int = EMBED_LIMIT,
    hnsw_threshold: int = DEFAULT_HNSW_THRESHOLD,
    database: str | None = None,
    peers: Sequence[str] = (),
) -> dict[str, Any]:
    """Every size on SQLite, and on PostgreSQL beside it where ``database`` names one
    (a URL, or ``pgserver`` for a throwaway server in the work directory); each of
    ``peers`` (:mod:`bench.peers`) on the same rows and queries."""
    from bench import peers as bare_stores
    from bench import pg

    before = [round(x, 2) for x in os.getloadavg()]  # the machine's other work
    model = bench_model()
    rows = []
    by_peer: dict[str, dict[str, Any]] = {name: {} for name in peers}
    with Timer() as timer, pg.postgres(database) if database else nullcontext("") as server:
        for size in sorted(sizes):
            with Progress() as bar:
                home = build_store(size, bar, embed_limit)
            row = measure(size, home, n_queries, model, hnsw_threshold)
            row["synthetic_rows"] = max(0, size - embed_limit)
            rows.append(row)
            if peers:
                texts, vectors = bare_stores.store_rows(home / DB_FILENAME, model.dim)
                asked = queries(n_queries, seed=7000 + size)  # memoryd's queries of the size
                for name in peers:
                    by_peer[name][str(size)] = bare_stores.measure(
                        name, STORES, texts, vectors, asked, model
                    )
            if server:
                row = measure_postgres(size, server, n_queries, model, embed_limit)
                row["synthetic_rows"] = max(0, size - embed_limit)
                rows.append(row)
    config: dict[str, Any] = {
        "ingest": f"{INGEST_TURNS} fresh turns via MemoryService.ingest in calls "
        "of 16; bare = the model's embed on the same texts; smart = as many other turns "
        "with mode=smart, timed until every task is done (rules, no LLM)",
        "search": f"{n_queries} queries, limit 10, each asked once in the run: its embedding "
        "included (search_*); then the same again, each vector from the query cache "
        "(search_cached_*; query_cache_hit_rate is the first pass's, 0 when no query repeats)",
        "vectors": f"the model's up to {embed_limit:,} rows, perturbed copies past that "
        f"(noise {SYNTHETIC_NOISE}, renormalised)",
        "hnsw_threshold": hnsw_threshold,
        "embedding_model": model.name,
        "load_average_before": before,
    }
    if peers:
        config["peers"] = (
            "the same rows (texts and the store's vectors) and queries: the store's part with "
            "the query's vector given, e2e from the question's words; as a user runs each "
            "(bench/peers.py)"
        )
    if database:
        from memoryd.store.postgres.database import describe

        config["postgres"] = (
            (
                "a pgserver PostgreSQL in the work directory"
                if database == pg.PGSERVER
                else describe(database)
            )
            + ": each size's store built once in its own database (same bulk path and vectors, "
            "HNSW index built after the load), measured on a fresh copy; not measured there: "
            "the first search of a new process, the HNSW recall, the plain dense and FTS5 "
            "baselines (SQLite's in-process index) and peak RSS (the server is another "
            "process); disk = pg_database_size; build_s = building the store (0: reused)"
        )
    return {
        "benchmark": "speed",
        "questions": n_queries,
        "metrics": {
            str(r["size"]) + ("" if r["backend"] == "sqlite" else " postgres"): r for r in rows
        },
        "config": config,
        "wall_s": round(timer.seconds, 1),
        **({"peers": by_peer} if peers else {}),
    }


COLUMNS = [
    "size",
    "backend",
    "ingest_per_s",
    "bare_embed_per_s",
    "ingest_vs_bare",
    "smart_ingest_per_s",
    "direct_add_per_s",
    "search_p50_ms",
    "search_p95_ms",
    "search_p99_ms",
    "query_cache_hit_rate",
    "search_cached_p50_ms",
    "search_cached_p95_ms",
    "baseline_dense_p95_ms",
    "baseline_bm25_p95_ms",
    "hnsw_recall_at_10",
    "first_search_s",
    "first_search_saved_graph_s",
    "first_search_after_writes_s",
    "peak_rss_mb",
    "disk_mb",
    "disk_bytes_per_memory",
    "build_s",
]


def print_report(report: dict[str, Any], console: Console) -> None:
    table = Table(title=f"speed ({report.get('cores')} cores, {report['wall_s']} s)")
    for c in COLUMNS:
        table.add_column(c.replace("_", " "), justify="right")
    for row in report["metrics"].values():
        table.add_row(*(f"{row[c]:,}" if c == "size" else str(row.get(c, "-")) for c in COLUMNS))
    console.print(table)
    if report.get("peers"):
        keys = ("store_search_p95_ms", "e2e_search_p95_ms", "disk_bytes_per_memory")
        side = Table(title="beside the bare stores (same rows, same queries)")
        for column in ("store", "size", *keys):
            side.add_column(column.replace("_", " "), justify="right")
        for size, row in report["metrics"].items():
            if row.get("backend") == "sqlite":
                side.add_row("memoryd", size, *(str(row.get(k, "-")) for k in keys))
            for name, sizes in report["peers"].items():
                if size in sizes:
                    side.add_row(name, size, *(str(sizes[size][k]) for k in keys))
        console.print(side)
