"""The server's memory while it sends an export: ``python -m bench export-rss``.

A store of ``size`` synthetic memories (built once, :func:`bench.speed.build_store`)
is served by ``memoryd serve --no-auth`` on a loopback port; ``GET /v1/export``
is read to its end by ``clients`` clients at once while the server process's
resident memory (``VmRSS`` of ``/proc``) is sampled every 50 ms. Reported: the
server's memory before, its peak during, the peak's growth, the bytes and time
of the export. Linux only (``/proc``).
"""

from __future__ import annotations

import shutil
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from bench.server import start_serve
from bench.speed import EMBED_LIMIT, build_store

SAMPLE_S = 0.05


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _read_export(url: str, sizes: list[int]) -> None:
    total = 0
    with httpx.stream("GET", f"{url}/v1/export", timeout=600) as answer:
        answer.raise_for_status()
        for chunk in answer.iter_raw():
            total += len(chunk)
    sizes.append(total)


def run(size: int, clients: int) -> dict[str, Any]:
    with Progress(transient=True) as bar:
        store = build_store(size, bar, EMBED_LIMIT)
    with tempfile.TemporaryDirectory(prefix="memoryd-export-") as work:
        home = Path(work) / "home"
        shutil.copytree(store, home)
        process, url = start_serve(home, ["--no-auth"])
        try:
            httpx.get(f"{url}/v1/memories", params={"limit": 1}, timeout=60)  # warm
            before = _rss_mb(process.pid)
            peak = before
            sizes: list[int] = []
            readers = [
                threading.Thread(target=_read_export, args=(url, sizes)) for _ in range(clients)
            ]
            started = time.perf_counter()
            for reader in readers:
                reader.start()
            while any(r.is_alive() for r in readers):
                peak = max(peak, _rss_mb(process.pid))
                time.sleep(SAMPLE_S)
            seconds = time.perf_counter() - started
        finally:
            process.terminate()
            process.wait(timeout=60)
    return {
        "benchmark": "export-rss",
        "size": size,
        "clients": clients,
        "rss_before_mb": round(before, 1),
        "rss_peak_mb": round(peak, 1),
        "rss_growth_mb": round(peak - before, 1),
        "export_mb": round(max(sizes, default=0) / 2**20, 1),
        "seconds": round(seconds, 1),
    }


def print_report(report: dict[str, Any], console: Console) -> None:
    table = Table(title=f"export of {report['size']:,} memories, {report['clients']} at once")
    for column in ("server RSS before", "peak", "growth", "export", "time"):
        table.add_column(column, justify="right")
    table.add_row(
        f"{report['rss_before_mb']} MB",
        f"{report['rss_peak_mb']} MB",
        f"{report['rss_growth_mb']} MB",
        f"{report['export_mb']} MB",
        f"{report['seconds']} s",
    )
    console.print(table)
