"""An unhandled error is a 500 that says the connection closes: the client's next request
goes on a new connection and is answered, instead of failing on a closed socket (where a
client cannot tell whether its write happened)."""

from __future__ import annotations

import errno
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from bench.stand_in import in_thread
from memoryd.config import load_settings
from memoryd.embed.local import LocalEmbedder
from memoryd.server.app import create_app
from memoryd.service import MemoryService
from memoryd.web.options import ServeOptions


@pytest.fixture
def url(tmp_path: Path, embedder: LocalEmbedder) -> Iterator[str]:
    service = MemoryService(settings=load_settings(tmp_path / "home"), embedder=embedder)
    app = create_app(options=ServeOptions(no_auth=True), service=service)

    def broken() -> None:
        raise RuntimeError("a bug memoryd did not foresee")

    def no_room() -> None:  # what an upload's spool or an export meets on a full disk
        raise OSError(errno.ENOSPC, "No space left on device")

    app.add_api_route("/v1/broken", broken, methods=["GET"])
    app.add_api_route("/v1/no-room", no_room, methods=["GET"])
    with in_thread(app, lifespan="on", log_level="critical", timeout_s=30) as base:
        yield base
    service.close()


def test_the_next_request_after_a_500_is_answered(url: str) -> None:
    with httpx.Client(base_url=url, timeout=20) as client:  # one keep-alive pool
        for _ in range(3):
            failed = client.get("/v1/broken")
            assert failed.status_code == 500
            assert failed.headers["connection"] == "close"
            assert failed.json()["error"]["code"] == "internal_error"
            written = client.post("/v1/memories", json={"content": "The user keeps bees"})
            assert written.status_code == 201, written.text
        assert len(client.get("/v1/memories").json()["memories"]) == 1


def test_a_full_disk_met_anywhere_is_a_507(url: str) -> None:
    with httpx.Client(base_url=url, timeout=20) as client:
        full = client.get("/v1/no-room")
        assert full.status_code == 507
        assert full.json()["error"]["code"] == "storage_full"
        assert "No space left" in full.json()["error"]["message"]
        assert client.get("/v1/memories").status_code == 200
