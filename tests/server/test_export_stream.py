"""``GET /v1/export`` is sent as it is written: in chunks, whole, and abandoned safely."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable

import httpx
import pytest
from server_harness import RunningServer, TenantClient
from starlette.responses import StreamingResponse

from memoryd.web import export_stream
from memoryd.web.export_stream import CHUNK_CHARS

MEMORIES = 400


def fill(t: TenantClient) -> None:
    for start in range(0, MEMORIES, 100):
        body = [
            {"content": f"Note {i}: the user's project {i} ships in week {i % 52} " + "x" * 300}
            for i in range(start, start + 100)
        ]
        for item in body:
            assert t.http.post("/v1/memories", json=item).status_code == 201


def test_the_export_comes_in_chunks_and_whole(server: RunningServer, alice: TenantClient) -> None:
    fill(alice)
    chunks = []
    with alice.http.stream("GET", "/v1/export") as answer:
        assert answer.status_code == 200
        assert answer.headers["content-type"].startswith("application/x-ndjson")
        # sent as written: no length known before the first byte, chunked transfer
        assert "content-length" not in answer.headers
        assert answer.headers["transfer-encoding"] == "chunked"
        chunks = list(answer.iter_raw())
    lines = b"".join(chunks).decode().splitlines()
    assert sum(len(c) for c in chunks) > CHUNK_CHARS
    records = [json.loads(line) for line in lines]
    assert records[0]["type"] == "header"
    assert sum(r["type"] == "memory" for r in records) == MEMORIES


def test_a_client_that_stops_reading_leaves_the_server_well(
    server: RunningServer, bob: TenantClient
) -> None:
    fill(bob)
    for _ in range(6):  # more abandoned exports than the server has walkers
        with bob.http.stream("GET", "/v1/export") as answer:
            first = next(answer.iter_raw())
            assert first.startswith(b'{"type": "header"')
    whole = httpx.get(
        f"{server.url}/v1/export", headers={"x-api-key": bob.key}, timeout=60
    ).text.splitlines()
    assert sum('"type": "memory"' in line for line in whole) == MEMORIES


def test_an_answer_never_sent_ends_its_walk(
    server: RunningServer, make_tenant: Callable[..., TenantClient], monkeypatch: pytest.MonkeyPatch
) -> None:
    """An export whose answer is never read (the client left before it began) fills the
    queue and then waits: after IDLE_S it ends, hands its walker back, and never holds the
    process open at exit."""
    carol = make_tenant("carol")
    fill(carol)
    monkeypatch.setattr(export_stream, "IDLE_S", 1.0)
    # a queue that this store fills: the walk must wait on a client that never reads
    monkeypatch.setattr(export_stream, "CHUNKS", 1)
    monkeypatch.setattr(export_stream, "CHUNK_CHARS", 1024)
    before = {t.ident for t in threading.enumerate()}
    answer = export_stream.export_response(server.service.for_tenant(carol.id))
    assert isinstance(answer, StreamingResponse)  # built, never iterated
    walks = [
        t for t in threading.enumerate() if "memoryd-export" in t.name and t.ident not in before
    ]
    assert walks and all(t.daemon for t in walks)
    for walk in walks:
        walk.join(timeout=30)
        assert not walk.is_alive()
    for _ in range(export_stream.WALKERS):  # every walker is free again
        assert export_stream._walkers.acquire(timeout=5)
    for _ in range(export_stream.WALKERS):
        export_stream._walkers.release()
