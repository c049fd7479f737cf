"""Conversation ingest as the plugins send it: how fast the 202 comes, how soon it is found.

A ``memoryd serve`` process on a fresh home gets ``POST /v1/memories`` with
``messages`` (20 turns of 5 KB by default, what the ourmem plugins send at
most, in their ``smart`` mode), one request at a time. For each request the
bench records the time to the 202, then polls a search for a word only that
request holds: the time until its turn is found (by its words), and until it
is found by meaning (the result carries a similarity, so its vector is
written). The TypeScript clients give up after 5 s.
"""

from __future__ import annotations

import shutil
import time
import uuid
from typing import Any

import httpx
from rich.console import Console

from bench.common import WORK_DIR, Timer, percentile_table, percentiles
from bench.server import REQUEST_TIMEOUT_S, _serve
from bench.synthetic import sentences

POLL_S = 0.01
SEARCHABLE_TIMEOUT_S = 60.0


def _messages(round_: int, count: int, chars: int, marker: str) -> list[dict[str, str]]:
    """``count`` alternating turns of ``chars`` characters; the last names ``marker``."""
    pool = sentences(count * 40, seed=5000 + round_)
    out = []
    for i in range(count):
        text = ""
        j = i * 40
        while len(text) < chars:
            text += pool[j % len(pool)] + " "
            j += 1
        if i == count - 1:
            text = f"{marker} {text}"
        out.append({"role": ("user", "assistant")[i % 2], "content": text[:chars]})
    return out


def _found(http: httpx.Client, marker: str) -> tuple[bool, bool]:
    """(found by its words, found with its vector) for the turn that holds ``marker``."""
    results = http.get("/v1/memories/search", params={"q": marker, "limit": 10}).json()["results"]
    hit = next((r for r in results if marker in r["memory"]["content"]), None)
    if hit is None:
        return False, False
    return True, hit["similarity"] is not None


def run(rounds: int, messages: int, chars: int, mode: str) -> dict[str, Any]:
    home = WORK_DIR / "ingest-latency"
    shutil.rmtree(home, ignore_errors=True)
    accept_ms: list[float] = []
    words_ms: list[float] = []
    meaning_ms: list[float] = []
    with Timer() as wall:
        process, url = _serve(home, 1)
        try:
            with httpx.Client(base_url=url, timeout=REQUEST_TIMEOUT_S) as http:
                http.get("/v1/memories/search", params={"q": "warm up"})
                for n in range(rounds):
                    marker = f"zq{uuid.uuid4().hex[:12]}"
                    body = {"messages": _messages(n, messages, chars, marker), "mode": mode}
                    started = time.perf_counter()
                    response = http.post("/v1/memories", json=body)
                    accepted = time.perf_counter()
                    response.raise_for_status()
                    accept_ms.append((accepted - started) * 1000)
                    words = meaning = None
                    deadline = accepted + SEARCHABLE_TIMEOUT_S
                    while meaning is None and time.perf_counter() < deadline:
                        by_words, by_vector = _found(http, marker)
                        now = time.perf_counter()
                        if by_words and words is None:
                            words = (now - accepted) * 1000
                        if by_vector:
                            meaning = (now - accepted) * 1000
                        else:
                            time.sleep(POLL_S)
                    if words is None or meaning is None:
                        raise RuntimeError(f"round {n}: not searchable {SEARCHABLE_TIMEOUT_S} s on")
                    words_ms.append(words)
                    meaning_ms.append(meaning)
        finally:
            process.terminate()
            process.wait(timeout=30)
    shutil.rmtree(home, ignore_errors=True)
    return {
        "benchmark": "ingest-latency",
        "questions": rounds,
        "metrics": {
            "accept_ms": percentiles(accept_ms),
            "searchable_by_words_ms": percentiles(words_ms),
            "searchable_by_meaning_ms": percentiles(meaning_ms),
        },
        "config": {
            "rounds": rounds,
            "messages": messages,
            "chars_per_message": chars,
            "mode": mode,
            "request": "POST /v1/memories with messages, one at a time, fresh home",
        },
        "wall_s": round(wall.seconds, 1),
    }


def print_report(report: dict[str, Any], console: Console) -> None:
    c = report["config"]
    table = percentile_table(
        f"ingest latency: {c['rounds']} requests of {c['messages']} messages x "
        f"{c['chars_per_message']} chars ({c['mode']}), {report.get('cores')} cores",
        "metric",
        report["metrics"],
    )
    console.print(table)


__all__ = ["print_report", "run"]
