"""Task rows on a real SQLite file: who may finish a run, and who is still alive."""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from memoryd.jobs.worker import worker_alive
from memoryd.store import DB_FILENAME, SQLiteStore

OWN = f"{socket.gethostname()}:{os.getpid()}"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SQLiteStore]:
    store = SQLiteStore(tmp_path / DB_FILENAME)
    with store.write() as conn:
        store.record_task(conn, "t1", "tenant", "space", "import", "queued", {}, {"n": 1})
    yield store
    store.close()


def status(store: SQLiteStore, task_id: str) -> tuple[str, str | None]:
    row = store.conn.execute(
        "SELECT status, claimed_by FROM tasks WHERE id = ?", (task_id,)
    ).fetchone()
    return row[0], row[1]


def test_a_run_finishes_only_the_claim_it_holds(store: SQLiteStore) -> None:
    first = store.claim_task(f"{OWN}/0", "import")
    assert first is not None and status(store, "t1") == ("running", f"{OWN}/0")
    # queued again while that run is still finishing (an import re-run)
    store.requeue_task("t1", {"post_process": True})
    assert not store.finish_task("t1", f"{OWN}/0", "completed", {"done": 1}, [])
    assert status(store, "t1") == ("queued", None)  # the late answer did not overwrite it
    # the new run, by another thread of the same process, finishes normally
    again = store.claim_task(f"{OWN}/1", "import")
    assert again is not None and again["payload"] == {"n": 1, "post_process": True}
    assert not store.finish_task("t1", f"{OWN}/0", "failed", {}, ["stale"])
    assert store.finish_task("t1", f"{OWN}/1", "completed", {"done": 2}, [])
    assert status(store, "t1") == ("completed", None)


def test_a_thread_suffix_names_the_same_process(store: SQLiteStore) -> None:
    assert not worker_alive(f"{OWN}/2", OWN)  # this process starting again: orphaned
    assert worker_alive(f"{socket.gethostname()}:{os.getppid()}/0", OWN)  # a live process
    assert worker_alive("another-host:1/0", OWN)  # another host's is assumed alive
    store.claim_task(f"{OWN}/0", "import")
    orphans, given_up = store.requeue_orphans(lambda w: worker_alive(w, OWN), "import")
    assert (orphans, given_up) == (1, [])
    assert status(store, "t1") == ("queued", None)
