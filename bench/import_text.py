"""A large text file through ``memoryd import-file``, as a user runs it.

A Markdown file of ``mb`` megabytes is generated once (paragraphs of the
speed bench's synthetic sentences, a heading every 40 paragraphs; the same
file for the same size) and imported into a new home by the real command in
a fresh process. Reported: wall time, kilobytes a second, the memories and
passages it made, and the process's peak resident memory.
"""

from __future__ import annotations

import os
import random
import resource
import shutil
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path
from typing import Any

from rich.console import Console

from bench.common import WORK_DIR, Timer, one_row_table
from bench.synthetic import sentences
from memoryd.store import DB_FILENAME

PARAGRAPHS_A_SECTION = 40


def text_file(mb: float) -> Path:
    """The generated file of ``mb`` megabytes (written once, then reused)."""
    path = WORK_DIR / "texts" / f"notes-{mb:g}mb.md"
    if path.exists():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    rng = random.Random(1234)
    pool = sentences(20_000, seed=99)
    target = int(mb * 2**20)
    written = paragraphs = 0
    partial = path.with_suffix(".partial")
    with partial.open("w", encoding="utf-8") as out:
        while written < target:
            if paragraphs % PARAGRAPHS_A_SECTION == 0:
                heading = f"## Section {paragraphs // PARAGRAPHS_A_SECTION + 1}\n\n"
                out.write(heading)
                written += len(heading)
            text = " ".join(rng.choice(pool) for _ in range(rng.randint(3, 7))) + "\n\n"
            out.write(text)
            written += len(text.encode("utf-8"))
            paragraphs += 1
    partial.rename(path)
    return path


def run(mb: float) -> dict[str, Any]:
    path = text_file(mb)
    home = WORK_DIR / "import-text-home"
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir(parents=True)
    env = {**os.environ, "MEMORYD_HOME": str(home), "MEMORYD_MAX_IMPORT_BYTES": str(2**31)}
    with Timer() as wall:
        done = subprocess.run(
            [sys.executable, "-m", "memoryd", "import-file", str(path)],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
    if done.returncode:
        raise RuntimeError(f"memoryd import-file failed: {done.stderr.strip()[-2000:]}")
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    with closing(sqlite3.connect(home / DB_FILENAME)) as conn:
        kinds = dict(
            conn.execute("SELECT memory_type, COUNT(*) FROM memories GROUP BY memory_type")
        )
    shutil.rmtree(home, ignore_errors=True)
    size_kb = path.stat().st_size / 1024
    return {
        "benchmark": "import-text",
        "questions": 1,
        "metrics": {
            "mb": mb,
            "wall_s": round(wall.seconds, 1),
            "kb_per_s": round(size_kb / wall.seconds, 1),
            "minutes_for_50_mb": round(50 * 1024 / (size_kb / wall.seconds) / 60, 1),
            "peak_rss_mb": round(peak_mb, 1),
            "memories": {str(k): int(v) for k, v in kinds.items()},
        },
        "config": {
            "file": f"{path.name}: generated Markdown, {size_kb:,.0f} KB",
            "command": "memoryd import-file FILE into a new home, a fresh process",
        },
        "wall_s": round(wall.seconds, 1),
    }


def print_report(report: dict[str, Any], console: Console) -> None:
    m = report["metrics"]
    cells = {
        "MB": m["mb"],
        "wall s": m["wall_s"],
        "KB/s": m["kb_per_s"],
        "50 MB, minutes": m["minutes_for_50_mb"],
        "peak RSS MB": m["peak_rss_mb"],
        "memories": m["memories"],
    }
    console.print(one_row_table(f"memoryd import-file of {m['mb']:g} MB of text", cells))
