"""A mixed load on a running memoryd server, from client processes.

Each client is its own process (so the clients' side is never one GIL), with
one keep-alive connection, and runs its own plan: four searches
(``GET /v1/memories/search``, limit 10), then one write (``POST /v1/memories``
with content), over and over, until the level's time is up (every client
finishes at least one round). All clients start together, once every one of
them is connected. Meanwhile the bench process samples ``GET /health`` on a
connection of its own, which says whether a busy server still answers at
once. A request that fails (a non-2xx answer, a timeout, a broken connection)
is counted as an error of its operation and the load goes on.

This module imports only what a client needs: each client process loads it.
"""

from __future__ import annotations

import multiprocessing
import queue
import threading
import time
from dataclasses import dataclass, field
from multiprocessing.synchronize import Barrier
from typing import Any

import httpx
import numpy as np

REQUEST_TIMEOUT_S = 60
START_TIMEOUT_S = 120  # every client process started and connected
ADD_EVERY = 5  # every fifth request of a client is a write: 80 % searches, 20 % adds
HEALTH_EVERY_S = 0.1


@dataclass
class Plan:
    """One client's share: its queries and the texts it writes, used in turn."""

    url: str
    queries: list[str]
    texts: list[str]
    seconds: float


@dataclass
class Outcome:
    """What one client saw: when it ran, and each request's operation, latency and result."""

    started: float
    ended: float
    samples: list[tuple[str, float, bool]] = field(default_factory=list)
    first_error: str | None = None


def _client(plan: Plan, ready: Barrier, results: Any) -> None:
    """A client process: connect, wait for the others, then run the plan until time is up."""
    outcome = Outcome(0.0, 0.0)
    with httpx.Client(base_url=plan.url, timeout=REQUEST_TIMEOUT_S) as http:
        http.get("/health")  # the connection is open before the clock starts
        ready.wait()
        outcome.started = time.monotonic()
        deadline = outcome.started + plan.seconds
        i = 0
        while time.monotonic() < deadline or i < ADD_EVERY:
            write = i % ADD_EVERY == ADD_EVERY - 1
            began = time.perf_counter()
            try:
                if write:
                    text = plan.texts[(i // ADD_EVERY) % len(plan.texts)]
                    answer = http.post("/v1/memories", json={"content": f"{text} #{i}"})
                else:
                    # a query never repeats: past the first round, each round is numbered
                    n = len(plan.queries)
                    query = plan.queries[i % n] + (f" round {i // n}" if i >= n else "")
                    answer = http.get("/v1/memories/search", params={"q": query, "limit": 10})
                ok = answer.is_success
                problem = None if ok else f"{answer.status_code}: {answer.text[:200]}"
            except httpx.HTTPError as exc:
                ok, problem = False, f"{type(exc).__name__}: {exc}"
            elapsed = (time.perf_counter() - began) * 1000
            outcome.samples.append(("add" if write else "search", elapsed, ok))
            if problem and outcome.first_error is None:
                outcome.first_error = problem
            i += 1
        outcome.ended = time.monotonic()
    results.put(outcome)


class _Health(threading.Thread):
    """``GET /health`` every ``HEALTH_EVERY_S`` until stopped: the latencies, and failures."""

    def __init__(self, url: str) -> None:
        super().__init__(daemon=True)
        self.url = url
        self.stop = threading.Event()
        self.ms: list[float] = []
        self.errors = 0

    def run(self) -> None:
        with httpx.Client(base_url=self.url, timeout=REQUEST_TIMEOUT_S) as http:
            while not self.stop.wait(HEALTH_EVERY_S):
                began = time.perf_counter()
                try:
                    ok = http.get("/health").is_success
                except httpx.HTTPError:
                    ok = False
                self.ms.append((time.perf_counter() - began) * 1000)
                self.errors += not ok


def _stats(ms: list[float]) -> dict[str, float]:
    if not ms:
        return {"p50_ms": 0.0, "p95_ms": 0.0, "p99_ms": 0.0}
    p50, p95, p99 = np.percentile(np.asarray(ms), [50, 95, 99])
    return {
        "p50_ms": round(float(p50), 1),
        "p95_ms": round(float(p95), 1),
        "p99_ms": round(float(p99), 1),
    }


def _collect(results: Any, clients: list[Any], seconds: float) -> list[Outcome]:
    """Every client's outcome; a client process that dies fails the level at once."""
    deadline = time.monotonic() + seconds + REQUEST_TIMEOUT_S * ADD_EVERY
    outcomes: list[Outcome] = []
    while len(outcomes) < len(clients):
        try:
            outcomes.append(results.get(timeout=1))
        except queue.Empty:
            dead = [p.exitcode for p in clients if p.exitcode not in (None, 0)]
            if dead:
                raise RuntimeError(f"a client process exited with {dead[0]}") from None
            if time.monotonic() > deadline:
                raise TimeoutError("the clients did not finish") from None
    return outcomes


def query_cache(url: str) -> tuple[float, float]:
    """(hits, misses) of the server's query-vector cache, from its ``/metrics``."""
    text = httpx.get(f"{url}/metrics", timeout=REQUEST_TIMEOUT_S).raise_for_status().text
    found = dict.fromkeys(("hits", "misses"), 0.0)
    for line in text.splitlines():
        for name in found:
            if line.startswith(f"memoryd_query_cache_{name}_total "):
                found[name] = float(line.split()[1])
    return found["hits"], found["misses"]


def level(plans: list[Plan]) -> dict[str, Any]:
    """Run every plan in its own process at once; per operation: throughput over the
    level's wall time, latency percentiles and errors; /health sampled meanwhile."""
    context = multiprocessing.get_context("spawn")
    ready = context.Barrier(len(plans) + 1)
    results = context.Queue()
    clients = [context.Process(target=_client, args=(p, ready, results)) for p in plans]
    for process in clients:
        process.start()
    health = _Health(plans[0].url)
    cache_before = query_cache(plans[0].url)
    try:
        ready.wait(timeout=START_TIMEOUT_S)
        health.start()
        outcomes = _collect(results, clients, max(p.seconds for p in plans))
    finally:
        health.stop.set()
        for process in clients:
            process.join(timeout=10)
            if process.is_alive():
                process.kill()
    if health.is_alive():
        health.join()
    wall = max(o.ended for o in outcomes) - min(o.started for o in outcomes)
    row: dict[str, Any] = {"clients": len(plans), "wall_s": round(wall, 1)}
    for kind in ("search", "add"):
        samples = [(ms, ok) for o in outcomes for k, ms, ok in o.samples if k == kind]
        row[kind] = {
            "requests": len(samples),
            "per_s": round(len(samples) / wall, 1),
            **_stats([ms for ms, _ in samples]),
            "errors": sum(not ok for _, ok in samples),
        }
    row["health"] = {"samples": len(health.ms), **_stats(health.ms), "errors": health.errors}
    hits, misses = (a - b for a, b in zip(query_cache(plans[0].url), cache_before, strict=True))
    # one worker's count where several serve (each keeps its own registry)
    row["search"]["query_cache_hit_rate"] = (
        round(hits / (hits + misses), 3) if hits + misses else 0.0
    )
    errors = [o.first_error for o in outcomes if o.first_error]
    if errors:
        row["first_error"] = errors[0]
    return row
