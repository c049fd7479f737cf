"""Nothing a request waits on holds up the others: a held write lock, a body that never comes.

These check liveness, not speed: each request must be answered while the
obstacle is still there (the write lock is released only after the answers
came back; the stalled client never sends its body). Before, the key check
recorded ``last_used_at`` with a blocking write on the event loop, so one
request with a fresh key, and ``/health`` with it, waited for the lock.
"""

from __future__ import annotations

import json
import socket
import sqlite3
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from server_harness import RunningServer, create_tenant, start_server

from memoryd.embed.local import LocalEmbedder
from memoryd.store import DB_FILENAME

# long enough that an answer which waited for the lock (30 s busy timeout) fails the test
ANSWER_WITHIN_S = 20
BODY_TIMEOUT_S = 1.0


@pytest.fixture(scope="module")
def server(
    tmp_path_factory: pytest.TempPathFactory, embedder: LocalEmbedder
) -> Iterator[RunningServer]:
    home = tmp_path_factory.mktemp("event-loop") / "home"
    running, stop = start_server(home, embedder, body_timeout_s=BODY_TIMEOUT_S)
    yield running
    stop()


def _last_used(server: RunningServer, tenant_id: str) -> object:
    with sqlite3.connect(server.home / DB_FILENAME) as conn:
        row = conn.execute(
            "SELECT last_used_at FROM api_keys WHERE tenant_id = ?", (tenant_id,)
        ).fetchone()
    return row[0]


def test_a_held_write_lock_holds_up_no_request(server: RunningServer) -> None:
    tenant_id, key = create_tenant(server, "fresh-key")
    assert _last_used(server, tenant_id) is None
    other_process = sqlite3.connect(server.home / DB_FILENAME, isolation_level=None)
    other_process.execute("BEGIN IMMEDIATE")  # the write lock, held as another writer would
    try:
        with ThreadPoolExecutor(max_workers=3) as pool:
            health = pool.submit(httpx.get, f"{server.url}/health", timeout=ANSWER_WITHIN_S)
            listed = pool.submit(
                httpx.get,
                f"{server.url}/v1/memories",
                headers={"X-API-Key": key},
                timeout=ANSWER_WITHIN_S,
            )
            searched = pool.submit(
                httpx.get,
                f"{server.url}/v1/memories/search",
                params={"q": "anything"},
                headers={"X-API-Key": key},
                timeout=ANSWER_WITHIN_S,
            )
            assert health.result().status_code == 200
            assert listed.result().status_code == 200
            assert searched.result().status_code == 200
        # the key's use is recorded behind the lock, not in front of the requests
        row = other_process.execute(
            "SELECT last_used_at FROM api_keys WHERE tenant_id = ?", (tenant_id,)
        ).fetchone()
        assert row[0] is None
    finally:
        other_process.execute("ROLLBACK")
        other_process.close()
    deadline = time.monotonic() + ANSWER_WITHIN_S
    while _last_used(server, tenant_id) is None:
        assert time.monotonic() < deadline, "the key's use was never recorded"
        time.sleep(0.05)


def _raw_request(server: RunningServer, head: str, body: bytes = b"") -> socket.socket:
    port = int(server.url.rsplit(":", 1)[1])
    sock = socket.create_connection(("127.0.0.1", port), timeout=ANSWER_WITHIN_S)
    sock.sendall(head.encode() + body)
    return sock


def _answer(sock: socket.socket) -> tuple[int, dict[str, object]]:
    data = b""
    while b"\r\n\r\n" not in data or not data.rstrip().endswith(b"}"):
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    return status, json.loads(body)


@pytest.mark.parametrize("sent", [b"", b'{"content": "half a bo'])
def test_a_body_that_stops_arriving_is_timed_out(server: RunningServer, sent: bytes) -> None:
    _, key = create_tenant(server, "slow")
    head = (
        "POST /v1/memories HTTP/1.1\r\n"
        f"Host: 127.0.0.1\r\nX-API-Key: {key}\r\n"
        "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n"
    )
    stalled = _raw_request(server, head, sent)
    try:
        # meanwhile the server answers everyone else
        assert httpx.get(f"{server.url}/health", timeout=ANSWER_WITHIN_S).status_code == 200
        status, body = _answer(stalled)
    finally:
        stalled.close()
    assert status == 408
    assert body == {
        "error": {
            "code": "request_timeout",
            "message": f"the request body stopped arriving for {BODY_TIMEOUT_S:g} s",
        }
    }
    with server.client(key) as http:
        assert http.get("/v1/memories").json()["total_count"] == 0


# more writes than the server has worker threads (anyio's default limiter: 40 tokens)
BLOCKED_WRITES = 48


def test_health_answers_while_every_worker_thread_waits(server: RunningServer) -> None:
    """``/health`` needs no worker thread: with every one of them held by a write that
    waits for the lock, it still answers (and the writes all land once the lock goes)."""
    _, key = create_tenant(server, "busy")
    other_process = sqlite3.connect(server.home / DB_FILENAME, isolation_level=None)
    other_process.execute("BEGIN IMMEDIATE")
    try:
        with ThreadPoolExecutor(max_workers=BLOCKED_WRITES) as pool:
            writes = [
                pool.submit(
                    httpx.post,
                    f"{server.url}/v1/memories",
                    json={"content": f"written behind the lock {i}"},
                    headers={"X-API-Key": key},
                    timeout=ANSWER_WITHIN_S * 3,
                )
                for i in range(BLOCKED_WRITES)
            ]
            time.sleep(2)  # the writes have taken every thread and wait for the lock
            assert not any(w.done() for w in writes)
            health = httpx.get(f"{server.url}/health", timeout=ANSWER_WITHIN_S)
            assert health.json() == {"status": "ok", "storage": "ok"}
            other_process.execute("ROLLBACK")
            assert [w.result().status_code for w in writes] == [201] * BLOCKED_WRITES
    finally:
        if other_process.in_transaction:
            other_process.execute("ROLLBACK")
        other_process.close()
    with server.client(key) as http:
        assert http.get("/v1/memories").json()["total_count"] == BLOCKED_WRITES
