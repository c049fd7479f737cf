"""``GET /v1/export`` is sent as it is written: in chunks, whole, and abandoned safely."""

from __future__ import annotations

import json

import httpx
from server_harness import RunningServer, TenantClient

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
