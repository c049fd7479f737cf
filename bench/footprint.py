"""What a memory costs on disk when it comes in one by one, as in use.

``memoryd add`` style writes (the SDK's ``Memory.add``: embedded, cached,
read for what it is about, with history) into a new SQLite home, then
SQLite's own page statistics (``dbstat``) per table and index: the bytes
each takes per memory, and how much of its pages is empty. ``bench speed``
builds its stores from precomputed vectors, which skips the embedding cache;
this is the path a user's memories take.
"""

from __future__ import annotations

import shutil
import sqlite3
import time
from contextlib import closing
from typing import Any

from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from bench.common import WORK_DIR, bench_embedder
from bench.synthetic import sentences
from memoryd.sdk import Memory
from memoryd.store import DB_FILENAME

TOP = 8  # tables and indexes listed, largest first


def run(adds: int) -> dict[str, Any]:
    home = WORK_DIR / "footprint"
    shutil.rmtree(home, ignore_errors=True)
    started = time.perf_counter()
    with Memory(home, embedder=bench_embedder()) as memory, Progress() as bar:
        task = bar.add_task(f"adding {adds:,} memories", total=adds)
        for text in sentences(adds, seed=4242):
            memory.add(text)
            bar.advance(task)
    with closing(sqlite3.connect(home / DB_FILENAME)) as conn:
        rows = conn.execute(
            "SELECT name, SUM(pgsize), SUM(unused) FROM dbstat GROUP BY name ORDER BY 2 DESC"
        ).fetchall()
    total = sum(int(size) for _, size, _ in rows)
    shutil.rmtree(home, ignore_errors=True)
    return {
        "benchmark": "footprint",
        "questions": adds,
        "metrics": {
            "bytes_per_memory": round(total / adds),
            "by_table": {
                name: {
                    "bytes_per_memory": round(size / adds),
                    "unused_share": round(free / size, 3),
                }
                for name, size, free in rows[:TOP]
            },
        },
        "config": {"adds": adds, "path": "Memory.add, one at a time, SQLite"},
        "wall_s": round(time.perf_counter() - started, 1),
    }


def print_report(report: dict[str, Any], console: Console) -> None:
    m = report["metrics"]
    table = Table(
        title=f"on disk: {m['bytes_per_memory']:,} bytes a memory "
        f"({report['config']['adds']:,} adds, {report['wall_s']} s)"
    )
    for column in ("table or index", "bytes a memory", "empty"):
        table.add_column(column, justify="left" if column.startswith("table") else "right")
    for name, row in m["by_table"].items():
        table.add_row(name, f"{row['bytes_per_memory']:,}", f"{row['unused_share']:.0%}")
    console.print(table)
