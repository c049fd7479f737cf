"""Two ``memoryd serve`` processes on one PostgreSQL: one memory, one task queue.

Each server has a home of its own (nothing shared on disk): whatever one
stores, the other finds at once; every task queued through either runs once;
a server killed in the middle of a task leaves it to the other.
"""

from __future__ import annotations

import signal
import socket
import subprocess
import time
from pathlib import Path

import httpx
import psycopg
import pytest
from server_harness import spawn_server, stop_process

CONVERSATIONS = 8
TIMEOUT_S = 180


def _conversation(i: int) -> list[dict[str, str]]:
    return [
        {"role": "user", "content": f"I live in city number {i}."},
        {"role": "user", "content": f"I love board game number {i}."},
        {"role": "user", "content": f"My name is Person {i}."},
    ]


def _tasks(url: str) -> dict[str, tuple[str, str | None, int]]:
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT id, status, claimed_by, attempts FROM tasks WHERE kind = 'ingest'"
        ).fetchall()
    return {r[0]: (r[1], r[2], r[3]) for r in rows}


def test_two_servers_share_memories_and_tasks_and_survive_a_kill(
    tmp_path: Path, postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMORYD_DATABASE_URL", postgres_url)
    one, url_one = spawn_server(tmp_path / "one", "--no-auth")
    try:
        two, url_two = spawn_server(tmp_path / "two", "--no-auth")
    except BaseException:
        stop_process(one)
        raise
    killed: subprocess.Popen[str] | None = None
    try:
        with (
            httpx.Client(base_url=url_one, timeout=30) as a,
            httpx.Client(base_url=url_two, timeout=30) as b,
        ):
            # a write through one is found through the other at once
            added = a.post("/v1/memories", json={"content": "The office wifi rotates monthly"})
            assert added.status_code == 201, added.text
            memory_id = added.json()["id"]
            assert b.get(f"/v1/memories/{memory_id}").json()["content"].startswith("The office")
            hits = b.get("/v1/memories/search", params={"q": "office wifi"}).json()["results"]
            assert hits[0]["memory"]["id"] == memory_id

            # smart ingest queued through both servers
            accepted = []
            for i in range(CONVERSATIONS):
                http = a if i % 2 else b
                body = {"messages": _conversation(i), "session_id": f"s{i}"}
                response = http.post("/v1/memories", json=body)
                assert response.status_code == 202, response.text
                accepted.append(response.json()["task_id"])

            # one space's tasks run one at a time, on whichever server claims first:
            # kill the server that runs one now
            owners = {f"{socket.gethostname()}:{p.pid}/": p for p in (one, two)}
            deadline = time.monotonic() + TIMEOUT_S
            running: list[tuple[str, str | None]] = []
            while not running:
                assert time.monotonic() < deadline, "no task ever ran"
                time.sleep(0.005)
                running = [
                    (t, c) for t, (s, c, _) in _tasks(postgres_url).items() if s == "running"
                ]
            prefix = next(p for p in owners if (running[0][1] or "").startswith(p))
            victim = owners[prefix]
            victim.send_signal(signal.SIGKILL)
            victim.wait(timeout=30)
            # a task takes about a second; the kill lands within milliseconds of seeing it
            cut_short = {
                t
                for t, (s, c, _) in _tasks(postgres_url).items()
                if s == "running" and (c or "").startswith(prefix)
            }
            assert cut_short, "the task ended before the kill landed"
            killed = victim
            survivor = b if victim is one else a

            # the other server finishes everything, the interrupted task included
            deadline = time.monotonic() + TIMEOUT_S
            while {s for s, _, _ in _tasks(postgres_url).values()} != {"completed"}:
                assert time.monotonic() < deadline, _tasks(postgres_url)
                time.sleep(0.1)
            attempts = {t: survivor.get(f"/v1/tasks/{t}").json()["attempts"] for t in accepted}
            # each ran once, but the one cut short, which ran again on the other server
            assert attempts == {t: 2 if t in cut_short else 1 for t in accepted}
            turns = survivor.get("/v1/memories", params={"memory_type": "session", "limit": 1000})
            assert turns.json()["total_count"] == 3 * CONVERSATIONS
            insights = survivor.get(
                "/v1/memories", params={"memory_type": "insight", "limit": 1000}
            )
            text = " ".join(m["content"] for m in insights.json()["memories"])
            for kind in ("name is", "lives in", "board game"):
                assert kind in text, text
    finally:
        for process in (one, two):
            if process is not killed:
                stop_process(process)
