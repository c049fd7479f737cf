"""Damage is detected, never served as an empty store or a 500; backups bring writes back.

Everything here runs ``memoryd serve``, ``backup`` and ``restore`` as real
processes on real files (acceptance 3): a database emptied to 0 bytes, one
deleted with its write-ahead log left behind, random bytes in the middle of
the file, damage that only shows when a row is read, the file removed under
a running server, and a backup taken while the server takes writes.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from server_harness import memoryd_command, spawn_server, stop_process

from memoryd.embed.local import LocalEmbedder
from memoryd.service import MemoryService
from memoryd.store import DB_FILENAME

REFUSE_WITHIN_S = 60
CANARY = "zqxj canary about the blue bicycle in the garden shed"
# what every read route is asked while the database is damaged: none may answer 500
READS = (
    "/v1/memories",
    "/v1/memories?memory_type=session",
    "/v1/memories/search?q=bicycle",
    "/v1/memories/search?q=weather",
    "/v1/profile",
    "/v1/stats",
    "/v1/stats/tags",
    "/v1/stats/spaces",
    "/v1/spaces",
    "/v1/export",
)


def _home_with_data(home: Path, embedder: LocalEmbedder, n: int = 200) -> list[str]:
    """A home that held data: ``n`` memories and the canary, closed (checkpointed)."""
    with MemoryService(home, embedder=embedder) as svc:
        ids = [
            svc.add(f"note {i}: the weather on day {i} was mild, and the shed stayed dry").id
            for i in range(n)
        ]
        ids.append(svc.add(CANARY).id)
    assert not (home / f"{DB_FILENAME}-wal").exists()
    return ids


def _serve_refused(home: Path, *args: str) -> str:
    """``memoryd serve`` on ``home``: it must stop at once with status 1; its output."""
    ran = subprocess.run(
        memoryd_command(home, "serve", "--port", "9", *args),
        capture_output=True,
        text=True,
        timeout=REFUSE_WITHIN_S,
    )
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert "First start" not in ran.stdout  # no new key for an empty store
    return " ".join((ran.stdout + ran.stderr).split())


def _cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        memoryd_command(home, "--json", *args), capture_output=True, text=True, timeout=120
    )


def _listed(home: Path) -> set[str]:
    ran = _cli(home, "list", "--limit", "1000")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    return {m["id"] for m in json.loads(ran.stdout)["memories"]}


# ---------------------------------------------------------------------- refused at start
def test_an_emptied_database_is_refused_not_started_empty(
    tmp_path: Path, embedder: LocalEmbedder
) -> None:
    home = tmp_path / "home"
    _home_with_data(home, embedder, n=5)
    db = home / DB_FILENAME
    db.write_bytes(b"")
    for args in ((), ("--no-auth",)):
        said = _serve_refused(home, *args)
        assert "is empty (0 bytes)" in said and "memoryd restore" in said
    listed = _cli(home, "list")
    assert listed.returncode == 1
    assert json.loads(listed.stdout)["error"]["code"] == "storage_damaged"
    assert db.stat().st_size == 0  # nothing was created in its place
    nowhere = tmp_path / "no-home"
    assert _cli(nowhere, "check").returncode == 1 and not nowhere.exists()


def test_a_deleted_database_with_its_wal_left_is_refused(tmp_path: Path) -> None:
    home = tmp_path / "home"
    process, url = spawn_server(home, "--no-auth")
    try:
        for i in range(5):
            made = httpx.post(f"{url}/v1/memories", json={"content": f"fact {i}"}, timeout=30)
            assert made.status_code == 201
    finally:
        process.send_signal(signal.SIGKILL)  # no checkpoint: the writes are in the WAL
        process.wait(timeout=30)
    wal = home / f"{DB_FILENAME}-wal"
    assert wal.stat().st_size > 0
    (home / DB_FILENAME).unlink()
    (home / "memoryd.home").unlink()  # the WAL alone is enough to know
    said = _serve_refused(home)
    assert "is missing" in said and "write-ahead log" in said
    assert not (home / DB_FILENAME).exists() and wal.stat().st_size > 0


def test_random_bytes_in_the_middle_are_refused_at_start(
    tmp_path: Path, embedder: LocalEmbedder
) -> None:
    home = tmp_path / "home"
    _home_with_data(home, embedder)
    db = home / DB_FILENAME
    data = bytearray(db.read_bytes())
    noise = random.Random(15)
    middle = len(data) // 2
    data[middle : middle + 4096] = noise.randbytes(4096)
    db.write_bytes(bytes(data))
    said = _serve_refused(home)
    assert "is damaged" in said and "memoryd restore" in said
    checked = _cli(home, "check")
    assert checked.returncode == 1 and json.loads(checked.stdout)["ok"] is False
    assert db.read_bytes() == bytes(data)  # refused, not repaired or rewritten


# ---------------------------------------------------------------------- found while serving
@pytest.fixture
def served(tmp_path: Path, embedder: LocalEmbedder) -> Iterator[tuple[Path, str, list[str]]]:
    home = tmp_path / "home"
    ids = _home_with_data(home, embedder, n=30)
    db = home / DB_FILENAME
    # bytes that are not UTF-8 inside the canary's text: a page SQLite's quick check passes
    data = db.read_bytes()
    assert data.count(CANARY.encode()) >= 1
    db.write_bytes(data.replace(CANARY.encode(), b"\xff" * len(CANARY)))
    process, url = spawn_server(home, "--no-auth")
    yield home, url, ids
    if process.poll() is None:
        stop_process(process)


def _statuses(url: str) -> dict[str, int]:
    return {path: httpx.get(url + path, timeout=30).status_code for path in READS}


def test_damage_found_while_serving_makes_the_store_read_only(
    served: tuple[Path, str, list[str]],
) -> None:
    home, url, ids = served
    assert httpx.get(f"{url}/health", timeout=30).status_code == 200  # nothing read it yet
    statuses = _statuses(url)
    assert 500 not in statuses.values(), statuses
    assert statuses["/v1/memories"] == 503  # the list reads the damaged row
    listed = httpx.get(f"{url}/v1/memories", timeout=30).json()
    assert listed["error"]["code"] == "storage_damaged"
    assert "memoryd restore" in listed["error"]["message"]
    assert "\ufffd" not in listed["error"]["message"] and str(home) not in str(listed)
    health = httpx.get(f"{url}/health", timeout=30)
    assert health.status_code == 503
    assert health.json()["storage"] == "damaged"
    # reads that miss the damage still answer; writes go nowhere
    assert httpx.get(f"{url}/v1/memories/{ids[0]}", timeout=30).status_code == 200
    refused = httpx.post(f"{url}/v1/memories", json={"content": "into a damaged file?"}, timeout=30)
    assert refused.status_code == 503
    assert refused.json()["error"]["code"] == "storage_damaged"
    assert httpx.post(f"{url}/v1/tenants", json={}, timeout=30).status_code == 503
    assert 500 not in _statuses(url).values()
    with sqlite3.connect(home / DB_FILENAME) as conn:
        assert conn.execute("SELECT COUNT(*) FROM memories").fetchone()[0] == len(ids)


def test_a_database_removed_under_the_server_is_saved_and_refused(
    served: tuple[Path, str, list[str]],
) -> None:
    home, url, ids = served
    made = httpx.post(f"{url}/v1/memories", json={"content": "written before"}, timeout=30)
    assert made.status_code == 201
    (home / DB_FILENAME).unlink()
    refused = httpx.post(f"{url}/v1/memories", json={"content": "into nothing?"}, timeout=30)
    assert refused.status_code == 503, refused.text
    message = refused.json()["error"]["message"]
    assert "was removed while in use" in message and "saved as" in message
    assert httpx.get(f"{url}/health", timeout=30).status_code == 503
    rescued = sorted(home.glob(f"{DB_FILENAME}.rescued-*"))
    assert len(rescued) == 1
    with sqlite3.connect(rescued[0]) as conn:
        held = {r[0] for r in conn.execute("SELECT id FROM memories")}
    assert {*ids, made.json()["id"]} <= held


# ---------------------------------------------------------------------- backup and restore
def test_a_backup_taken_while_the_server_writes_restores_every_acknowledged_write(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    process, url = spawn_server(home, "--no-auth")
    acked: list[str] = []
    stop = threading.Event()
    failures: list[Any] = []

    def write() -> None:
        with httpx.Client(base_url=url, timeout=30) as http:
            i = 0
            while not stop.is_set():
                made = http.post("/v1/memories", json={"content": f"acknowledged fact {i}"})
                if made.status_code != 201:
                    failures.append(made.text)
                    return
                acked.append(made.json()["id"])
                i += 1

    writer = threading.Thread(target=write)
    writer.start()
    try:
        while len(acked) < 20:
            assert writer.is_alive(), failures
            time.sleep(0.05)
        before_backup = list(acked)
        target = tmp_path / "backups" / "memoryd-backup.db"
        made = _cli(home, "backup", str(target))
        assert made.returncode == 0, made.stdout + made.stderr
        reported = json.loads(made.stdout)
        during = len(acked)
        while len(acked) < during + 10:  # the server went on writing after the backup
            assert writer.is_alive(), failures
            time.sleep(0.05)
    finally:
        stop.set()
        writer.join(timeout=60)
        stop_process(process)
    assert not failures
    assert reported["path"] == str(target) and reported["memories"] >= len(before_backup)
    assert not Path(f"{target}-wal").exists()  # one self-contained file
    # restored into a new home: every write acknowledged before the backup is there
    fresh = tmp_path / "fresh"
    restored = _cli(fresh, "restore", str(target))
    assert restored.returncode == 0, restored.stdout + restored.stderr
    assert set(before_backup) <= _listed(fresh)
    # restored over the live home: the replaced files are kept, with every write
    over = _cli(home, "restore", str(target))
    assert over.returncode == 0, over.stdout + over.stderr
    moved = [Path(p) for p in json.loads(over.stdout)["moved_aside"]]
    assert moved and all(p.exists() for p in moved)
    assert set(before_backup) <= _listed(home)
    with sqlite3.connect(moved[0]) as conn:
        kept = {r[0] for r in conn.execute("SELECT id FROM memories")}
    assert set(acked) <= kept
    process, url = spawn_server(home, "--no-auth")  # and the restored home serves
    try:
        assert httpx.get(f"{url}/health", timeout=30).json() == {"status": "ok", "storage": "ok"}
    finally:
        stop_process(process)


def test_a_damaged_file_is_neither_backed_up_nor_restored(
    tmp_path: Path, embedder: LocalEmbedder
) -> None:
    home = tmp_path / "home"
    _home_with_data(home, embedder, n=50)
    good = tmp_path / "good.db"
    assert _cli(home, "backup", str(good)).returncode == 0
    folder = tmp_path / "dated"
    folder.mkdir()
    assert _cli(home, "backup", str(folder)).returncode == 0
    assert len(list(folder.glob("memoryd-*.db"))) == 1
    before = good.read_bytes()
    db = home / DB_FILENAME
    data = bytearray(db.read_bytes())
    data[len(data) // 2 : len(data) // 2 + 4096] = random.Random(3).randbytes(4096)
    db.write_bytes(bytes(data))
    refused = _cli(home, "backup", str(good))
    assert refused.returncode == 1 and "damaged" in refused.stdout
    assert good.read_bytes() == before  # the good backup was not replaced
    broken = tmp_path / "broken.db"
    broken.write_bytes(bytes(data))
    other = tmp_path / "other"
    assert _cli(other, "restore", str(broken)).returncode == 1
    assert not (other / DB_FILENAME).exists()
    assert _cli(home, "restore", str(good)).returncode == 0
    assert _cli(home, "check").returncode == 0
    assert len(_listed(home)) == 51
    assert os.path.exists(db)
