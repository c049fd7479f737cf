"""The first ``add()`` of a new process on a home that a bulk load just filled.

A bulk load (``memoryd import``, ``memoryd migrate``, the speed bench's own
build) leaves a large space with no vector index in memory and no HNSW graph
on disk. The first write reads the space's rows to check for a twin, and
a space past the HNSW threshold needs its graph: built inline, that was a
minute at 100,000 memories. The speed store of ``size`` memories is copied
into a new home (its graph files left behind, as after an import) and a
fresh process opens it, warms the model, and times its first adds and a
search; whether the graph was still being built aside is reported.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from typing import Any

from rich.console import Console
from rich.progress import Progress

from bench.common import Timer, one_row_table
from bench.speed import build_store
from memoryd.store import DB_FILENAME

FIRST_ADD = """
import json, sys, time
from memoryd.service import MemoryService
svc = MemoryService(sys.argv[1])
svc.engine.embedder.embed(["the model loaded and warm, as in a process that imported"])
times = []
for text in ("I keep my kayak in the shed behind the house",
             "The plumber comes on Tuesday at nine"):
    started = time.perf_counter()
    svc.add(text)
    times.append(time.perf_counter() - started)
started = time.perf_counter()
svc.search("where is the kayak kept", touch=False)
search = time.perf_counter() - started
space = svc.store.index.space(svc.space_id)
graph = "building aside" if space.aside is not None else space.graph_origin or "none"
print(json.dumps({"adds": times, "search": search, "graph": graph}))
svc.close()
"""


def run(size: int) -> dict[str, Any]:
    with Timer() as wall, Progress() as bar:
        store = build_store(size, bar)
    home = store.parent / f"n{size}-first-add"
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir(parents=True)
    shutil.copy2(store / DB_FILENAME, home / DB_FILENAME)  # the rows, not the saved graph
    done = subprocess.run(
        [sys.executable, "-c", FIRST_ADD, str(home)], capture_output=True, text=True, check=False
    )
    shutil.rmtree(home, ignore_errors=True)
    if done.returncode:
        raise RuntimeError(f"the first-add process failed: {done.stderr.strip()[-2000:]}")
    answer = json.loads(done.stdout.strip().splitlines()[-1])
    first, second = answer["adds"]
    return {
        "benchmark": "first-add",
        "questions": 2,
        "metrics": {
            "memories": size,
            "first_add_s": round(first, 3),
            "second_add_s": round(second, 3),
            "search_s": round(answer["search"], 3),
            "graph": answer["graph"],
        },
        "config": {
            "size": size,
            "path": "a fresh process on a copy of the speed store's database, model warm",
        },
        "wall_s": round(wall.seconds, 1),
    }


def print_report(report: dict[str, Any], console: Console) -> None:
    m = report["metrics"]
    cells = {
        "first add s": m["first_add_s"],
        "second add s": m["second_add_s"],
        "search s": m["search_s"],
        "graph": m["graph"],
    }
    console.print(
        one_row_table(f"first add after a bulk load of {m['memories']:,} memories", cells)
    )
