"""Server under load: a mixed load of client processes against a real ``memoryd serve``.

The store of the speed bench at one size is copied (on SQLite, the home; on
PostgreSQL, the size's database, see :mod:`bench.pg`) and served by one
``memoryd serve --workers N`` process on a loopback port (``--no-auth``, so no
key lookup is timed), for each N asked for in turn, every one on a fresh copy.
At each client level (1, 8 and 32 by default) every client process does 80 %
searches and 20 % writes, interleaved (:mod:`bench.load`), for the level's
seconds. Reported per operation (search, add): throughput, latency
p50/p95/p99 and errors (non-2xx answers or failed requests; a level with
errors is reported, with its first error, not dropped), and ``GET /health``
p95 sampled during the load.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any

import httpx
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from bench.common import Timer
from bench.load import REQUEST_TIMEOUT_S, Plan, level
from bench.speed import EMBED_LIMIT, build_store
from bench.synthetic import queries, sentences

START_TIMEOUT_S = 120
WARM_UP_SEARCHES = 8  # a worker's first searches are slower (caches, the pool's connections)

__all__ = ["REQUEST_TIMEOUT_S", "run", "start_serve"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _serve(
    home: Path, workers: int, env: dict[str, str] | None = None
) -> tuple[subprocess.Popen[bytes], str]:
    return start_serve(home, ["--no-auth", "--workers", str(workers)], env)


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


@contextmanager
def _served(size: int, workers: int, server: str | None, bar: Progress) -> Iterator[str]:
    """A fresh copy of the size's store, served with ``workers`` workers: its URL."""
    env = dict(os.environ)
    if server:
        from bench import pg

        template = pg.build_pg_store(server, size, bar, EMBED_LIMIT)
        name = f"{template}_server"
        env["MEMORYD_DATABASE_URL"] = pg.copy_database(server, template, name)
        work = pg.pg_home(name)
    else:
        env.pop("MEMORYD_DATABASE_URL", None)
        store = build_store(size, bar)
        work = store.parent / f"n{size}-server"
        shutil.rmtree(work, ignore_errors=True)
        shutil.copytree(store, work)
    try:
        process, url = _serve(work, workers, env)
        try:
            with httpx.Client(base_url=url, timeout=REQUEST_TIMEOUT_S) as http:
                for q in queries(WARM_UP_SEARCHES * workers, seed=5):
                    http.get("/v1/memories/search", params={"q": q}).raise_for_status()
            yield url
        finally:
            process.terminate()
            process.wait(timeout=30)
    finally:
        if server:
            pg.drop_database(server, name)
        else:
            shutil.rmtree(work, ignore_errors=True)


def _plans(url: str, clients: int, seconds: float, tag: str) -> list[Plan]:
    """Each client its own queries and texts (seeded, so every run sends the same); no
    query of one level is asked in another, nor in the warm-up."""
    return [
        Plan(
            url,
            queries(50, seed=1000 * clients + c),
            [f"[{tag} client {c}] {t}" for t in sentences(50, seed=5000 + c)],
            seconds,
        )
        for c in range(clients)
    ]


def run(
    size: int,
    seconds: float,
    levels: list[int],
    workers: list[int],
    database: str | None = None,
) -> dict[str, Any]:
    from bench import pg

    before = [round(x, 2) for x in os.getloadavg()]  # the machine's other work
    runs = []
    with Timer() as wall, pg.postgres(database) if database else nullcontext("") as server:
        for n in workers:
            with Progress() as bar, _served(size, n, server, bar) as url:
                tag = f"w{n}"
                rows = [level(_plans(url, c, seconds, f"{tag} c{c}")) for c in levels]
            runs.append(
                {
                    "workers": n,
                    "database": "postgres" if database else "sqlite",
                    "levels": rows,
                    "errors": sum(r[k]["errors"] for r in rows for k in ("search", "add")),
                }
            )
    return {
        "benchmark": "server",
        "questions": sum(
            r[k]["requests"] for x in runs for r in x["levels"] for k in ("search", "add")
        ),
        "metrics": runs,
        "config": {
            "size": size,
            "load_average_before": before,
            "workers": workers,
            "clients": levels,
            "seconds_per_level": seconds,
            "database": "postgres" if database else "sqlite",
            "postgres": (
                "a pgserver PostgreSQL in the work directory, every worker on it"
                if database == pg.PGSERVER
                else "a given PostgreSQL server, every worker on it"
            )
            if database
            else None,
            "mix": "each client process: 4 searches, then 1 add, over and over (80 % / 20 %)",
            "search": "GET /v1/memories/search, limit 10, no query repeated in a run, so its "
            "embedding included (query_cache_hit_rate: the server's own count, from /metrics; "
            "one worker's where several serve)",
            "add": "POST /v1/memories with content (embedded and written before 201)",
            "health": "GET /health every 0.1 s from the bench process during each level",
            "errors": "non-2xx answers and failed requests (timeouts, broken connections)",
        },
        "wall_s": round(wall.seconds, 1),
    }


def print_report(report: dict[str, Any], console: Console) -> None:
    config = report["config"]
    for one in report["metrics"]:
        table = Table(
            title=f"server: {config['size']:,} memories, {one['workers']} worker(s) on "
            f"{one['database']}, {config['seconds_per_level']} s a level, "
            f"{report.get('cores')} cores, load average {report['machine']['load_average']}"
        )
        table.add_column("clients", justify="right")
        for kind in ("search", "add"):
            for column in ("per_s", "p50_ms", "p95_ms", "p99_ms", "errors"):
                table.add_column(f"{kind} {column.replace('_', ' ')}", justify="right")
        table.add_column("health p95 ms", justify="right")
        for row in one["levels"]:
            cells = [str(row["clients"])]
            for kind in ("search", "add"):
                cells += [
                    str(row[kind][c]) for c in ("per_s", "p50_ms", "p95_ms", "p99_ms", "errors")
                ]
            cells.append(str(row["health"]["p95_ms"]))
            table.add_row(*cells)
        console.print(table)
        for row in one["levels"]:
            if "first_error" in row:
                console.print(
                    f"  {row['clients']} clients, first error: {row['first_error']}", markup=False
                )
