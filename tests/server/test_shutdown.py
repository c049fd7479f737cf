"""SIGTERM during a file import: the server exits at the import's next unit, and the import
runs again, whole, at the next start (before, the exit waited for the whole import)."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import httpx
from server_harness import spawn_server

SECTIONS = 20000  # about 1.8 MB of Markdown: some 70 units, each under a second
EXIT_WITHIN_S = 10  # a unit or two; the whole import takes several times longer


def notes() -> bytes:
    return "\n".join(
        f"## Section {i}\n\nThe user wrote note {i} about the garden, bees number {i}.\n"
        for i in range(SECTIONS)
    ).encode()


def poll(url: str, import_id: str, until: float, done: bool) -> dict[str, object]:
    while True:
        task = httpx.get(f"{url}/v1/imports/{import_id}", timeout=30).json()
        started = (task.get("extraction_progress") or 0) > 0
        if (done and task["status"] != "processing") or (not done and started):
            return dict(task)
        assert time.monotonic() < until, task
        time.sleep(0.5)


def test_sigterm_stops_an_import_at_its_next_unit_and_it_resumes(tmp_path: Path) -> None:
    home = tmp_path / "home"
    process, url = spawn_server(home, "--no-auth")
    files = {"file": ("notes.md", notes(), "text/markdown")}
    accepted = httpx.post(f"{url}/v1/imports", files=files, timeout=60).json()
    running = poll(url, accepted["id"], time.monotonic() + 120, done=False)
    assert running["status"] == "processing"
    asked = time.monotonic()
    process.send_signal(signal.SIGTERM)
    process.communicate(timeout=120)
    assert time.monotonic() - asked < EXIT_WITHIN_S
    again, url = spawn_server(home, "--no-auth")
    try:
        finished = poll(url, accepted["id"], time.monotonic() + 300, done=True)
        assert finished["status"] == "completed" and finished["errors"] == []
        made = finished["memories_created"]
        assert isinstance(made, int) and made > 0
        stats = httpx.get(f"{url}/v1/stats", timeout=30).json()
        assert stats["total"] == made  # the interrupted run left nothing behind
    finally:
        again.send_signal(signal.SIGTERM)
        again.communicate(timeout=120)
