"""A really full disk: a small file system filled up under a running server.

Writes that cannot happen are a 507 ``storage_full`` (a file import too: its
upload was a connection reset), /health says
the storage is full, nothing acknowledged is lost, and writes work again once
there is room. The file system is a tmpfs of its own, so this needs the right
to mount one (:mod:`full_disk`).
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from full_disk import fill, small_disk
from server_harness import spawn_server

SIZE = "96m"  # over the 64 MiB under which /health says full


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[Path]:
    with small_disk(tmp_path / "disk", SIZE) as where:
        yield where


def test_a_full_disk_is_a_507_and_loses_nothing(disk: Path) -> None:
    home, spool = disk / "home", disk / "tmp"
    spool.mkdir()
    process, url = spawn_server(home, "--no-auth", env={"TMPDIR": str(spool)})
    try:
        kept = []
        for i in range(20):
            made = httpx.post(f"{url}/v1/memories", json={"content": f"fact {i}"}, timeout=30)
            assert made.status_code == 201
            kept.append(made.json()["id"])
        fill(disk / "filler")
        answers = []
        for i in range(60):
            text = f"note {i}: " + "words about the garden and the bees " * 100
            answers.append(httpx.post(f"{url}/v1/memories", json={"content": text}, timeout=30))
        codes = {a.status_code for a in answers}
        assert 500 not in codes and 507 in codes, codes
        full = next(a for a in answers if a.status_code == 507)
        assert full.json()["error"]["code"] == "storage_full"
        kept += [a.json()["id"] for a in answers if a.status_code == 201]
        fill(disk / "filler-2")  # whatever SQLite gave back meanwhile
        upload = {"file": ("notes.md", b"# Notes\n\n" + b"The user likes bees.\n" * 150_000)}
        refused = httpx.post(f"{url}/v1/imports", files=upload, timeout=60)
        print("UPLOAD", refused.status_code, refused.text[:300])
        assert refused.status_code == 507, refused.text[:300]
        assert refused.json()["error"]["code"] == "storage_full"
        health = httpx.get(f"{url}/health", timeout=30)
        assert health.status_code == 503 and health.json()["storage"] == "full"
        (disk / "filler").unlink()  # room again
        (disk / "filler-2").unlink()
        again = httpx.post(f"{url}/v1/memories", json={"content": "room again"}, timeout=30)
        assert again.status_code == 201
        listed = httpx.get(f"{url}/v1/memories", params={"limit": 1000}, timeout=30).json()
        assert set(kept) <= {m["id"] for m in listed["memories"]}
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
