"""One memory at a time, at size: what a single add, get, update, forget, list or ingest costs.

A store that grows must not make the operations on one memory slower: an id,
a key, a session or a slot is found by an index, never by reading every
memory of the space. Each operation runs ``repeats`` times on a copy of the
speed bench's store of ``size`` memories (built once and kept, as ``bench
speed`` keeps it), in this process, the model loaded; the report gives the
median and the slowest of each, in milliseconds. Comparing two sizes shows
what grows with the store.
"""

from __future__ import annotations

import shutil
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from bench.common import SMART_TASK_TIMEOUT_S, Timer
from bench.speed import EMBED_LIMIT, build_store
from memoryd.service import MemoryService


def _timed(repeats: int, op: Callable[[int], Any]) -> dict[str, float]:
    took = []
    for i in range(repeats):
        started = time.perf_counter()
        op(i)
        took.append((time.perf_counter() - started) * 1000)
    return {"p50_ms": round(statistics.median(took), 2), "max_ms": round(max(took), 2)}


def measure(svc: MemoryService, repeats: int) -> dict[str, dict[str, float]]:
    """Each operation ``repeats`` times; what one run of it costs."""
    svc.search("warm up", touch=False)  # the index loaded, as a running server has it

    def smart(i: int) -> None:
        said = [
            {"role": "user", "content": f"I prefer green tea number {i} over coffee now"},
            {"role": "assistant", "content": "Noted."},
        ]
        task = svc.ingest(said, session_id=f"ops-smart-{i}", mode="smart").task_id
        svc.wait_for_task(task, timeout_s=SMART_TASK_TIMEOUT_S)

    ids = [svc.add(f"a note to change and forget, number {i}").id for i in range(repeats)]
    ops: dict[str, Callable[[int], Any]] = {
        "add": lambda i: svc.add(f"I like the hiking trail number {i} near the lake"),
        "add by key": lambda i: svc.add(f"my favourite colour is shade {i}", key="colour"),
        "get": lambda i: svc.get(ids[i]),
        "get by prefix": lambda i: svc.get(ids[i][:8]),
        "update": lambda i: svc.update(ids[i], content=f"a changed note, number {i}"),
        "history": lambda i: svc.history(ids[i]),
        "list": lambda i: svc.list_memories(),
        "list a session": lambda i: svc.list_memories(session_id=f"ops-raw-{i}"),
        "ingest two turns": lambda i: svc.ingest(
            [
                {"role": "user", "content": f"I moved to the city number {i}"},
                {"role": "assistant", "content": "Nice!"},
            ],
            session_id=f"ops-raw-{i}",
        ),
        "ingest, smart, to its end": smart,
        "forget": lambda i: svc.delete(ids[i]),
    }
    return {name: _timed(repeats, op) for name, op in ops.items()}


def run(size: int, repeats: int, embed_limit: int = EMBED_LIMIT) -> dict[str, Any]:
    with Progress() as bar:
        store = build_store(size, bar, embed_limit)
    work = store.parent / f"{store.name}-ops"
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(store, work)
    try:
        with Timer() as wall, MemoryService(work) as svc:
            metrics = measure(svc, repeats)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return {
        "benchmark": "ops",
        "questions": repeats,
        "metrics": metrics,
        "config": {"size": size, "repeats": repeats, "store": str(Path(store).name)},
        "wall_s": round(wall.seconds, 1),
    }


def print_report(report: dict[str, Any], console: Console) -> None:
    config = report["config"]
    table = Table(
        title=f"one memory at a time, {config['size']:,} memories ({config['repeats']} runs each)"
    )
    for column in ("operation", "median ms", "slowest ms"):
        table.add_column(column, justify="left" if column == "operation" else "right")
    for name, row in report["metrics"].items():
        table.add_row(name, f"{row['p50_ms']:.2f}", f"{row['max_ms']:.2f}")
    console.print(table)
