"""Turns answered with a 202 before their vectors: killed in between, nothing is lost."""

from __future__ import annotations

import signal
import sqlite3
import time
from pathlib import Path

import httpx
from server_harness import spawn_server, stop_process

from memoryd.store import DB_FILENAME

REQUESTS = 3
MESSAGES = 20
TIMEOUT_S = 180


def _counts(home: Path) -> tuple[int, int, int]:
    """(conversation turns, turns without a vector, rows still queued)."""
    with sqlite3.connect(home / DB_FILENAME, timeout=30) as conn:
        turns = conn.execute("SELECT COUNT(*) FROM memories WHERE memory_type = 'session'")
        bare = conn.execute(
            "SELECT COUNT(*) FROM memories WHERE memory_type = 'session' AND vector IS NULL"
        )
        queued = conn.execute("SELECT COUNT(*) FROM pending_embeddings")
        return turns.fetchone()[0], bare.fetchone()[0], queued.fetchone()[0]


def _messages(request: int) -> list[dict[str, str]]:
    filler = "the quarterly planning notes go on about budgets and hiring " * 10
    return [
        {
            "role": "user",
            "content": f"Request {request} turn {i} mentions topic-{request}-{i}. {filler}",
        }
        for i in range(MESSAGES)
    ]


def test_killed_after_the_202_embeds_everything_on_the_next_start(tmp_path: Path) -> None:
    home = tmp_path / "home"
    process, url = spawn_server(home, "--no-auth")
    try:
        with httpx.Client(base_url=url, timeout=60) as http:
            for n in range(REQUESTS):
                body = {"messages": _messages(n), "session_id": f"s{n}", "mode": "raw"}
                response = http.post("/v1/memories", json=body)
                assert response.status_code == 202, response.text
                assert response.json()["stored_count"] == MESSAGES
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
    turns, bare, queued = _counts(home)
    assert turns == REQUESTS * MESSAGES  # every acknowledged turn is durable
    assert bare > 0 and queued == bare  # each turn without its vector is queued for one

    process, url = spawn_server(home, "--no-auth")
    try:
        deadline = time.monotonic() + TIMEOUT_S
        while _counts(home)[1:] != (0, 0):
            assert time.monotonic() < deadline, _counts(home)
            time.sleep(0.2)
        with httpx.Client(base_url=url, timeout=60) as http:
            # found by meaning: the similarity is the cosine of the stored vector
            found = http.get(
                "/v1/memories/search", params={"q": "topic-2-19 planning", "limit": 5}
            ).json()["results"]
            assert "topic-2-19" in found[0]["memory"]["content"]
            assert found[0]["similarity"] is not None
    finally:
        stop_process(process)
