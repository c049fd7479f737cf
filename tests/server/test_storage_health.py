"""Storage health that tells the truth: a removed write-ahead log, a full disk, a read-only
file system. /health turns degraded, the affected writes are a 503 or 507 with a clear
code (never a 500), and nothing acknowledged is lost."""

from __future__ import annotations

import signal
import sqlite3
from pathlib import Path

import httpx
import pytest
from server_harness import RunningServer, spawn_server

from memoryd.embed.local import LocalEmbedder
from memoryd.errors import StorageFullError, StorageReadOnlyError
from memoryd.service import MemoryService
from memoryd.store import DB_FILENAME
from memoryd.store import database as sqlite_database

WRITES = 20


def test_a_write_ahead_log_removed_under_the_server_loses_nothing(tmp_path: Path) -> None:
    home = tmp_path / "home"
    process, url = spawn_server(home, "--no-auth")
    try:
        made = []
        for i in range(WRITES):
            answer = httpx.post(f"{url}/v1/memories", json={"content": f"fact {i}"}, timeout=30)
            assert answer.status_code == 201
            made.append(answer.json()["id"])
        wal = home / f"{DB_FILENAME}-wal"
        assert wal.stat().st_size > 0  # the writes are in the log, not yet in the file
        wal.unlink()
        health = httpx.get(f"{url}/health", timeout=30)
        assert health.status_code == 503
        assert health.json()["storage"] == "damaged"
        assert "removed or replaced while in use" in health.json()["error"]["message"]
        refused = httpx.post(f"{url}/v1/memories", json={"content": "after"}, timeout=30)
        assert refused.status_code == 503
        assert refused.json()["error"]["code"] == "storage_damaged"
        assert "restart memoryd" in refused.json()["error"]["message"]
    finally:
        process.send_signal(signal.SIGKILL)  # no clean close: what was saved is what is kept
        process.wait(timeout=30)
    with sqlite3.connect(home / DB_FILENAME) as conn:
        kept = {r[0] for r in conn.execute("SELECT id FROM memories")}
    assert set(made) <= kept  # every acknowledged write, after a restart
    again, url = spawn_server(home, "--no-auth")
    try:
        assert httpx.get(f"{url}/health", timeout=30).json()["status"] == "ok"
        assert (
            httpx.post(f"{url}/v1/memories", json={"content": "on"}, timeout=30).status_code == 201
        )
    finally:
        again.send_signal(signal.SIGTERM)
        again.wait(timeout=30)


def test_a_full_database_is_a_507_and_what_was_written_stays(
    tmp_path: Path, embedder: LocalEmbedder
) -> None:
    """SQLite's own "database or disk is full", reached by capping the file's pages."""
    with MemoryService(tmp_path / "home", embedder=embedder) as svc:
        kept = svc.add("The user keeps bees")
        pages = svc.store.conn.execute("PRAGMA page_count").fetchone()[0]
        svc.store.conn.execute(f"PRAGMA max_page_count = {pages}")
        with pytest.raises(StorageFullError) as full:
            for i in range(200):
                svc.add(f"note {i}: " + "words about the garden " * 200)
        assert full.value.http_status == 507 and full.value.code == "storage_full"
        assert "free some space" in full.value.message
        svc.store.conn.execute("PRAGMA max_page_count = 1073741823")
        assert svc.get(kept.id).content == "The user keeps bees"
        assert svc.add("room again").content == "room again"


def test_a_read_only_database_is_a_503_read_only(tmp_path: Path, embedder: LocalEmbedder) -> None:
    with MemoryService(tmp_path / "home", embedder=embedder) as svc:
        kept = svc.add("The user keeps bees")
        svc.store.conn.execute("PRAGMA query_only = ON")  # SQLITE_READONLY, as a read-only mount
        with pytest.raises(StorageReadOnlyError) as refused:
            svc.add("another")
        assert refused.value.http_status == 503 and refused.value.code == "storage_read_only"
        svc.store.conn.execute("PRAGMA query_only = OFF")
        assert svc.get(kept.id).content == "The user keeps bees"


def test_health_says_when_the_disk_is_nearly_full(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, embedder: LocalEmbedder
) -> None:
    with MemoryService(tmp_path / "home", embedder=embedder) as svc:
        assert svc.store.storage_problem() is None
        monkeypatch.setattr(sqlite_database, "MIN_FREE_BYTES", 2**62)  # more than any disk
        problem = svc.store.storage_problem()
        assert problem is not None and problem.code == "storage_full"
        assert "MiB free" in problem.message


def test_the_health_route_reports_a_nearly_full_disk(
    server: RunningServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert httpx.get(f"{server.url}/health", timeout=30).json()["status"] == "ok"
    monkeypatch.setattr(sqlite_database, "MIN_FREE_BYTES", 2**62)
    health = httpx.get(f"{server.url}/health", timeout=30)
    assert health.status_code == 503
    assert health.json() | {"error": None} == {
        "status": "degraded",
        "storage": "full",
        "error": None,
    }
    assert health.json()["error"]["code"] == "storage_full"
