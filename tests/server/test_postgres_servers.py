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


def _freeze_a_server_mid_task(
    url: str, owners: dict[str, subprocess.Popen[str]]
) -> tuple[subprocess.Popen[str], set[str]]:
    """The server running a task, stopped (SIGSTOP) while the task is still running, and
    the tasks it holds. A task can end between seeing it run and the stop landing: the
    server is then let go on (SIGCONT) and the next running task is caught instead."""
    deadline = time.monotonic() + TIMEOUT_S
    while time.monotonic() < deadline:
        tasks = _tasks(url)
        assert {s for s, _, _ in tasks.values()} != {"completed"}, "no task was caught running"
        running = [c for s, c, _ in tasks.values() if s == "running"]
        if not running:
            time.sleep(0.005)
            continue
        prefix = next(p for p in owners if (running[0] or "").startswith(p))
        process = owners[prefix]
        process.send_signal(signal.SIGSTOP)  # frozen: the task it holds cannot finish now
        held = {
            t
            for t, (s, c, _) in _tasks(url).items()
            if s == "running" and (c or "").startswith(prefix)
        }
        if held:
            return process, held
        process.send_signal(signal.SIGCONT)
    raise AssertionError("no task was caught running")


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
            victim, cut_short = _freeze_a_server_mid_task(postgres_url, owners)
            victim.send_signal(signal.SIGKILL)
            victim.wait(timeout=30)
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
                process.send_signal(signal.SIGCONT)  # one frozen by a failure: let it stop
                stop_process(process)
