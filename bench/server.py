"""Server throughput: concurrent HTTP clients against a real ``memoryd serve``.

The store of the speed bench at one size is copied, served by a
``memoryd serve`` process on a loopback port (``--no-auth``, so no key
lookup is timed twice), and hit by 1, 4 and 16 client threads: first
searches (``GET /v1/memories/search``, limit 10), then direct adds
(``POST /v1/memories``). Reported per concurrency level: requests per
second over the whole level and the latency p50 / p95 / p99 a client saw.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from bench.common import Timer
from bench.speed import _percentiles, build_store
from bench.synthetic import queries, sentences

START_TIMEOUT_S = 120
REQUEST_TIMEOUT_S = 60


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _serve(home: Path, workers: int) -> tuple[subprocess.Popen[bytes], str]:
    return start_serve(home, ["--no-auth", "--workers", str(workers)])


def start_serve(
    home: Path, options: list[str], env: dict[str, str] | None = None
) -> tuple[subprocess.Popen[bytes], str]:
    """``memoryd serve`` on a free loopback port with ``options``, once /health answers."""
    port = _free_port()
    command = [sys.executable, "-m", "memoryd.cli", "--home", str(home), "serve", *options]
    command += ["--port", str(port), "--log-level", "warning"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, env=env)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"memoryd serve exited with {process.returncode}")
        try:
            if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                return process, url
        except httpx.HTTPError:
            time.sleep(0.2)
    process.kill()
    raise RuntimeError("memoryd serve did not start")


def _level(url: str, clients: int, jobs: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """Run ``jobs`` (method-less: search params or add bodies) spread over ``clients``."""
    latencies: list[float] = []

    def worker(share: list[tuple[str, dict[str, Any]]]) -> list[float]:
        own = []
        with httpx.Client(base_url=url, timeout=REQUEST_TIMEOUT_S) as http:
            for kind, payload in share:
                started = time.perf_counter()
                if kind == "search":
                    response = http.get("/v1/memories/search", params=payload)
                else:
                    response = http.post("/v1/memories", json=payload)
                response.raise_for_status()
                own.append((time.perf_counter() - started) * 1000)
        return own

    shares = [jobs[i::clients] for i in range(clients)]
    with Timer() as timer, ThreadPoolExecutor(clients) as pool:
        for result in pool.map(worker, shares):
            latencies += result
    stats = _percentiles(latencies)
    return {
        "clients": clients,
        "requests": len(jobs),
        "req_per_s": round(len(jobs) / timer.seconds, 1),
        "p50_ms": stats["p50"],
        "p95_ms": stats["p95"],
        "p99_ms": stats["p99"],
    }


def run(size: int, n_requests: int, levels: list[int], workers: int) -> dict[str, Any]:
    with Progress() as bar:
        store = build_store(size, bar)
    work = store.parent / f"n{size}-server"
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(store, work)
    rows: dict[str, Any] = {"search": [], "add": []}
    with Timer() as wall:
        process, url = _serve(work, workers)
        try:
            httpx.get(f"{url}/v1/memories/search", params={"q": "warm up"}, timeout=60)
            for clients in levels:
                searches = [("search", {"q": q, "limit": 10}) for q in queries(n_requests)]
                rows["search"].append(_level(url, clients, searches))
                texts = sentences(n_requests, seed=3000 + clients)
                adds = [("add", {"content": f"[server {clients}] {t}"}) for t in texts]
                rows["add"].append(_level(url, clients, adds))
        finally:
            process.terminate()
            process.wait(timeout=30)
    shutil.rmtree(work, ignore_errors=True)
    return {
        "benchmark": "server",
        "questions": n_requests,
        "metrics": rows,
        "config": {
            "size": size,
            "workers": workers,
            "requests_per_level": n_requests,
            "search": "GET /v1/memories/search, limit 10, query embedding included",
            "add": "POST /v1/memories with content (embedded and written before 201)",
        },
        "wall_s": round(wall.seconds, 1),
    }


def print_report(report: dict[str, Any], console: Console) -> None:
    for kind, rows in report["metrics"].items():
        table = Table(
            title=f"server {kind} ({report['config']['size']:,} memories, "
            f"{report['config']['workers']} worker(s), {report.get('cores')} cores)"
        )
        for column in ("clients", "requests", "req_per_s", "p50_ms", "p95_ms", "p99_ms"):
            table.add_column(column.replace("_", " "), justify="right")
        for row in rows:
            table.add_row(*(str(v) for v in row.values()))
        console.print(table)
