"""Bulk import: ``memoryd import`` of an export, against the bare model on the same texts.

An import of a large export should run at the embedder's pace: everything
else it does (reading and checking the file, skipping ids already present,
writing a batch a transaction) ought to be small beside the model. The
speed bench's store of ``size`` memories is exported once with ``memoryd
export`` (cached beside the store), then imported into a new home by the
real command, as a user runs it (a fresh process, its progress bar on
stderr); the bare model embeds the same texts in the bench's process,
warm. Reported: memories a second for each, and their ratio.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import Progress

from bench.common import Timer, bench_model, one_row_table
from bench.speed import build_store
from memoryd.models import Memory
from memoryd.store import DB_FILENAME
from memoryd.text.conversation import embedding_text


def _memoryd(home: Path, *args: str) -> None:
    env = {**os.environ, "MEMORYD_HOME": str(home)}
    done = subprocess.run(
        [sys.executable, "-m", "memoryd", *args], env=env, capture_output=True, text=True
    )
    if done.returncode:
        raise RuntimeError(f"memoryd {' '.join(args)} failed: {done.stderr.strip()[-2000:]}")


def export_of(store: Path) -> Path:
    """The store's export, written once by ``memoryd export`` (a copy of the store exports:
    opening a home may write to it)."""
    out = store.parent / f"{store.name}-export.jsonl"
    if out.exists():
        return out
    work = store.parent / f"{store.name}-export-home"
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(store, work)
    partial = out.with_name(out.name + ".partial")
    _memoryd(work, "export", str(partial))
    partial.rename(out)
    shutil.rmtree(work, ignore_errors=True)
    return out


def texts_of(export: Path) -> list[str]:
    """What the import embeds for each memory of the export."""
    texts = []
    with export.open(encoding="utf-8") as lines:
        for line in lines:
            record = json.loads(line)
            if record.get("type") == "memory":
                texts.append(embedding_text(Memory.model_validate(record["memory"])))
    return texts


def run(size: int) -> dict[str, Any]:
    with Timer() as wall:
        report = _measure(size)
    return {**report, "wall_s": round(wall.seconds, 1)}


def _measure(size: int) -> dict[str, Any]:
    with Progress() as bar:
        store = build_store(size, bar)
    export = export_of(store)
    texts = texts_of(export)
    model = bench_model()
    model.embed(texts[:64])  # loaded and warm, as in the importing process after its start
    with Timer() as bare:
        model.embed(texts)
    home = store.parent / f"n{size}-import"
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir(parents=True)
    with Timer() as imported:
        _memoryd(home, "import", str(export))
    if not (home / DB_FILENAME).exists():
        raise RuntimeError(f"memoryd import wrote no database in {home}")
    shutil.rmtree(home, ignore_errors=True)
    return {
        "benchmark": "import",
        "questions": len(texts),
        "metrics": {
            "memories": len(texts),
            "import_s": round(imported.seconds, 1),
            "import_per_s": round(len(texts) / imported.seconds, 1),
            "bare_embed_per_s": round(len(texts) / bare.seconds, 1),
            "import_vs_bare": round(bare.seconds / imported.seconds, 3),
        },
        "config": {
            "size": size,
            "import": "memoryd import EXPORT into a new home, a fresh process (start-up included)",
            "bare": "the model's embed on the same texts, warm, in one call",
        },
        "load_average": os.getloadavg(),
    }


def print_report(report: dict[str, Any], console: Console) -> None:
    m = report["metrics"]
    cells = {
        "import s": m["import_s"],
        "import /s": m["import_per_s"],
        "bare model /s": m["bare_embed_per_s"],
        "import / bare": m["import_vs_bare"],
    }
    console.print(one_row_table(f"bulk import of {m['memories']:,} memories", cells))
