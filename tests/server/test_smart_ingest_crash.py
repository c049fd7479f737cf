"""A server killed in the middle of smart ingest finishes the work on its next start."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import httpx
from server_harness import spawn_server, stop_process

from memoryd.store import DB_FILENAME

CONVERSATIONS = 24
TIMEOUT_S = 120
# smart ingest's tasks are short: a kill can land between two of them
KILL_TRIES = 5


def _statuses(home: Path) -> dict[str, str]:
    with sqlite3.connect(home / DB_FILENAME, timeout=30) as conn:
        return dict(conn.execute("SELECT id, status FROM tasks WHERE kind = 'ingest'"))


def _conversation(i: int) -> list[dict[str, str]]:
    return [
        {"role": "user", "content": f"I live in city number {i}."},
        {"role": "user", "content": f"I love board game number {i}."},
        {"role": "user", "content": f"I usually run {i} kilometres every morning."},
        {"role": "user", "content": f"My name is Person {i}."},
    ]


def _kill_while_running(home: Path, process: subprocess.Popen[bytes]) -> dict[str, str]:
    """Kill the server (``kill -9``) once a task is seen running; the statuses after."""
    deadline = time.monotonic() + TIMEOUT_S
    try:
        while "running" not in _statuses(home).values():
            assert time.monotonic() < deadline, "no task ever ran"
            time.sleep(0.01)
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
    return _statuses(home)


def test_killed_mid_task_resumes_and_loses_nothing(tmp_path: Path) -> None:
    home = tmp_path / "home"
    process, url = spawn_server(home, "--no-auth")
    accepted: list[str] = []
    try:
        with httpx.Client(base_url=url, timeout=30) as http:
            for i in range(CONVERSATIONS):
                body = {"messages": _conversation(i), "session_id": f"s{i}"}
                response = http.post("/v1/memories", json=body)
                assert response.status_code == 202
                accepted.append(response.json()["task_id"])
        interrupted = _kill_while_running(home, process)
        # a task may finish between the look and the kill: the next start tries again
        for _ in range(KILL_TRIES - 1):
            if "running" in interrupted.values():
                break
            process, url = spawn_server(home, "--no-auth")
            interrupted = _kill_while_running(home, process)
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGKILL)
            process.wait(timeout=30)
    assert set(interrupted) == set(accepted)
    assert "running" in interrupted.values(), interrupted
    assert list(interrupted.values()).count("completed") < CONVERSATIONS

    process, url = spawn_server(home, "--no-auth")
    try:
        deadline = time.monotonic() + TIMEOUT_S
        while set(_statuses(home).values()) != {"completed"}:
            assert time.monotonic() < deadline, _statuses(home)
            time.sleep(0.1)
        with httpx.Client(base_url=url, timeout=30) as http:
            turns = http.get("/v1/memories", params={"memory_type": "session", "limit": 1000})
            assert turns.json()["total_count"] == 4 * CONVERSATIONS  # every acknowledged message
            resumed = [http.get(f"/v1/tasks/{t}").json() for t in accepted]
            assert all(t["facts_extracted"] >= 3 for t in resumed), resumed
            assert max(t["attempts"] for t in resumed) == 2  # the interrupted one ran twice
            # each turn is kept (a later conversation's name retires an earlier one's from
            # search, as the facts they said: it is listed, marked superseded)
            listed = http.get("/v1/memories", params={"memory_type": "session", "limit": 1000})
            assert any("Person 7." in m["content"] for m in listed.json()["memories"])
            # the distilled memories are there too, one of each kind at least
            insights = http.get("/v1/memories", params={"memory_type": "insight", "limit": 1000})
            text = " ".join(m["content"] for m in insights.json()["memories"])
            for kind in ("name is", "lives in", "board game", "kilometres"):
                assert kind in text, text
    finally:
        stop_process(process)
