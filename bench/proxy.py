"""What the memory proxy adds: the same streamed chat, direct and through ``memoryd serve``.

A scripted OpenAI-compatible upstream (uvicorn in this process, answering
each streamed completion with a fixed number of chunks) is called directly
and through a ``memoryd serve`` process whose store holds the speed bench's
memories (10,000 by default) and whose default upstream it is. The proxied
requests authenticate with a real key and get memoryd's default settings
(hybrid recall, 2000 tokens; ``--strategy`` picks another): each one
searches the store, injects the block, and is remembered after the answer,
as in use.

Per concurrency level (1 and 20 concurrent streams), for both paths: time
to first chunk and time to the last chunk, p50 and p95. The overhead is the
proxied percentile minus the direct one. memoryd's own search on the same
server (one client, limit 20) is timed beside them: on a busy machine it
tells what recall costs at that moment.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
from rich.console import Console
from rich.progress import Progress
from rich.table import Table
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import StreamingResponse
from starlette.routing import Route

from bench.common import Timer, percentiles
from bench.server import start_serve
from bench.speed import build_store
from bench.stand_in import serving
from bench.synthetic import queries
from memoryd.service import LOCAL_TENANT, MemoryService
from memoryd.tenancy.tenants import Tenants

CHUNKS = 20
REQUEST_TIMEOUT_S = 60


# ---------------------------------------------------------------------- the upstream
async def _completions(request: Request) -> StreamingResponse:
    body = await request.json()
    model = body.get("model", "bench")

    async def events() -> Any:
        for i in range(CHUNKS):
            delta = {"content": f"word{i} "}
            chunk = {
                "id": "chatcmpl-bench",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": None}],
            }
            yield f"data: {json.dumps(chunk)}\n\n".encode()
            await asyncio.sleep(0)  # one chunk per write, as a model sends them
        yield b"data: [DONE]\n\n"

    return StreamingResponse(events(), media_type="text/event-stream")


def _upstream() -> Starlette:
    return Starlette(routes=[Route("/v1/chat/completions", _completions, methods=["POST"])])


# ---------------------------------------------------------------------- memoryd serve
def _serve(home: Path, upstream: str) -> tuple[subprocess.Popen[bytes], str]:
    env = {**os.environ, "MEMORYD_UPSTREAM_URL": upstream, "MEMORYD_UPSTREAM_API_KEY": "bench"}
    return start_serve(home, [], env)


# ---------------------------------------------------------------------- the clients
def _stream(http: httpx.Client, url: str, question: str) -> tuple[float, float]:
    """(ms to the first chunk, ms to the last) of one streamed completion."""
    body = {"model": "bench", "stream": True, "messages": [{"role": "user", "content": question}]}
    started = time.perf_counter()
    first = 0.0
    with http.stream("POST", url, json=body) as response:
        response.raise_for_status()
        for _ in response.iter_raw():
            if not first:
                first = time.perf_counter()
    return (first - started) * 1000, (time.perf_counter() - started) * 1000


def _level(url: str, key: str, clients: int, questions: list[str]) -> dict[str, Any]:
    def worker(share: list[str]) -> list[tuple[float, float]]:
        headers = {"Authorization": f"Bearer {key}"}
        with httpx.Client(headers=headers, timeout=REQUEST_TIMEOUT_S) as http:
            return [_stream(http, url, q) for q in share]

    samples: list[tuple[float, float]] = []
    shares = [questions[i::clients] for i in range(clients)]
    with Timer() as timer, ThreadPoolExecutor(clients) as pool:
        for result in pool.map(worker, shares):
            samples += result
    ttfc = percentiles([s[0] for s in samples])
    total = percentiles([s[1] for s in samples])
    return {
        "streams": len(samples),
        "streams_per_s": round(len(samples) / timer.seconds, 1),
        "ttfc_p50_ms": ttfc["p50"],
        "ttfc_p95_ms": ttfc["p95"],
        "total_p50_ms": total["p50"],
        "total_p95_ms": total["p95"],
    }


def _search_level(url: str, key: str, questions: list[str]) -> dict[str, float]:
    """memoryd's own search on the same server, one client: what recall costs right now."""
    latencies = []
    with httpx.Client(base_url=url, headers={"X-API-Key": key}, timeout=REQUEST_TIMEOUT_S) as http:
        for q in questions:
            started = time.perf_counter()
            http.get("/v1/memories/search", params={"q": q, "limit": 20}).raise_for_status()
            latencies.append((time.perf_counter() - started) * 1000)
    return percentiles(latencies)


def run(size: int, n_requests: int, levels: list[int], strategy: str = "hybrid") -> dict[str, Any]:
    with Progress() as bar:
        store = build_store(size, bar)
    work = store.parent / f"n{size}-proxy"
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(store, work)
    with MemoryService(work) as svc:
        _, key = Tenants(svc.engine).create_key(LOCAL_TENANT, "bench")
    rows: list[dict[str, Any]] = []
    with Timer() as wall, serving(_upstream()) as upstream:
        process, url = _serve(work, upstream)
        try:
            chosen = httpx.put(
                f"{url}/api/settings/memory",
                json={"enabled": False} if strategy == "off" else {"strategy": strategy},
                headers={"X-API-Key": key},
            )
            chosen.raise_for_status()
            proxied_url = f"{url}/v1/chat/completions"
            direct_url = f"{upstream}/chat/completions"
            for warm in queries(10, seed=99):  # models loaded, connections open
                with httpx.Client(headers={"Authorization": f"Bearer {key}"}) as http:
                    _stream(http, proxied_url, warm)
                    _stream(http, direct_url, warm)
            for clients in levels:
                questions = queries(n_requests, seed=500 + clients)
                direct = _level(direct_url, key, clients, questions)
                proxied = _level(proxied_url, key, clients, questions)
                rows.append(
                    {
                        "clients": clients,
                        "search_1_client_ms": _search_level(url, key, questions[:50]),
                        "direct": direct,
                        "proxied": proxied,
                        "overhead_p50_ms": round(
                            proxied["total_p50_ms"] - direct["total_p50_ms"], 2
                        ),
                        "overhead_p95_ms": round(
                            proxied["total_p95_ms"] - direct["total_p95_ms"], 2
                        ),
                        "ttfc_overhead_p50_ms": round(
                            proxied["ttfc_p50_ms"] - direct["ttfc_p50_ms"], 2
                        ),
                        "ttfc_overhead_p95_ms": round(
                            proxied["ttfc_p95_ms"] - direct["ttfc_p95_ms"], 2
                        ),
                    }
                )
        finally:
            process.terminate()
            process.wait(timeout=60)
    shutil.rmtree(work, ignore_errors=True)
    return {
        "benchmark": "proxy",
        "questions": n_requests,
        "metrics": rows,
        "config": {
            "size": size,
            "requests_per_level": n_requests,
            "chunks_per_answer": CHUNKS,
            "strategy": strategy,
            "proxied": "POST /v1/chat/completions, stream, Bearer key, recall within 2000 tokens",
            "direct": "the same request to the scripted upstream",
        },
        "wall_s": round(wall.seconds, 1),
        "load_average": os.getloadavg(),
    }


def print_report(report: dict[str, Any], console: Console) -> None:
    table = Table(
        title=f"memory proxy overhead ({report['config']['size']:,} memories, "
        f"{report['config']['strategy']} recall, "
        f"{report['config']['requests_per_level']} streams a level, {report.get('cores')} cores)"
    )
    columns = (
        "streams",
        "direct p50/p95 ms",
        "proxied p50/p95 ms",
        "overhead p50/p95 ms",
        "first chunk direct",
        "first chunk proxied",
        "search alone",
    )
    for column in columns:
        table.add_column(column, justify="right")
    for row in report["metrics"]:
        d, p = row["direct"], row["proxied"]
        table.add_row(
            str(row["clients"]),
            f"{d['total_p50_ms']} / {d['total_p95_ms']}",
            f"{p['total_p50_ms']} / {p['total_p95_ms']}",
            f"{row['overhead_p50_ms']} / {row['overhead_p95_ms']}",
            f"{d['ttfc_p50_ms']} / {d['ttfc_p95_ms']}",
            f"{p['ttfc_p50_ms']} / {p['ttfc_p95_ms']}",
            f"{row['search_1_client_ms']['p50']} / {row['search_1_client_ms']['p95']}",
        )
    console.print(table)
    console.print(f"load average at the end: {report.get('load_average')}")
