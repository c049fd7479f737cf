"""Imports that do not finish: Ctrl-C, a killed process, and ``memoryd imports`` to follow them."""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import time
from pathlib import Path
from typing import Any

from test_cli import memoryd_command, ok, ok_json, run

WORDS = [
    *("alpha", "beta", "gamma", "delta", "project", "meeting", "berlin", "coffee", "deploy"),
    *("server", "client", "memory", "budget", "review", "team", "design", "planning"),
]
WAIT_S = 120


def text_file(path: Path, sentences: int, seed: int) -> Path:
    rng = random.Random(seed)
    lines = []
    for n in range(sentences):
        lines.append(" ".join(rng.choice(WORDS) for _ in range(14)).capitalize() + ".")
        if n % 8 == 7:
            lines.append("")
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def start_import(home: Path, file: Path) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORYD_")}
    env.update(MEMORYD_HOME=str(home), COLUMNS="200", PYTHONIOENCODING="utf-8")
    return subprocess.Popen(
        [*memoryd_command(), "import-file", str(file)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
        # Ctrl-C as a terminal delivers it: a test run started in the background of a
        # non-interactive shell ignores SIGINT, and a child would inherit that
        preexec_fn=_default_sigint,
    )


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def wait_until_under_way(home: Path, process: subprocess.Popen[str]) -> dict[str, Any]:
    """The import once it has finished a unit of work (and is not done yet)."""
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        assert process.poll() is None, process.communicate()
        db = home / "memoryd.db"
        rows = []
        if db.exists():
            with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
                try:
                    rows = conn.execute("SELECT id, status, detail FROM import_tasks").fetchall()
                except sqlite3.OperationalError:  # the process is still creating the schema
                    rows = []
            for import_id, status, detail in rows:
                if status == "processing" and json.loads(detail).get("extraction_progress"):
                    return {"id": import_id, **json.loads(detail)}
        time.sleep(0.1)
    raise AssertionError("the import never got under way")


def test_ctrl_c_stops_an_import_that_can_be_resumed_or_rolled_back(tmp_path: Path) -> None:
    home = tmp_path / "home"
    big = text_file(tmp_path / "big.txt", 3000, seed=1)
    process = start_import(home, big)
    under_way = wait_until_under_way(home, process)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=WAIT_S)
    assert process.returncode == 130, (out, err)
    assert "interrupted" in err and f"memoryd imports resume {under_way['id'][:8]}" in err
    assert "Traceback" not in err
    # it stopped before the end, what it wrote is rolled back, and it says so
    paused = ok_json(home, "imports", "show", under_way["id"][:8])
    assert (paused["status"], paused["extraction_status"]) == ("interrupted", "interrupted")
    assert paused["extraction_progress"] == 0 and paused["memories_created"] == 0
    assert paused["extraction_chunks"] == under_way["extraction_chunks"]
    assert any("interrupted" in e for e in paused["errors"])
    assert ok_json(home, "list", "--type", "session")["total_count"] == 0
    listed = ok(home, "imports", "list").out
    assert under_way["id"][:8] in listed and "interrupted" in listed and "processing" not in listed

    # resumed, it runs from the start to its end
    resumed = ok_json(home, "imports", "resume", under_way["id"][:8])
    assert resumed["status"] == "completed" and resumed["memories_created"] > 0
    assert ok_json(home, "list", "--type", "session")["total_count"] > 0

    rolled = ok_json(home, "imports", "rollback", under_way["id"][:8])
    assert rolled["import_status"] == "rolled_back"
    assert ok_json(home, "imports", "show", under_way["id"])["status"] == "rolled_back"
    refused = run(home, "imports", "resume", under_way["id"][:8])
    assert refused.code == 1 and "only an unfinished import resumes" in refused.err


def test_a_killed_import_resumes_when_the_file_is_imported_again(tmp_path: Path) -> None:
    home = tmp_path / "home"
    notes = text_file(tmp_path / "notes.txt", 1500, seed=2)  # several units of work
    process = start_import(home, notes)
    under_way = wait_until_under_way(home, process)
    process.kill()
    process.communicate(timeout=WAIT_S)
    assert ok_json(home, "imports", "show", under_way["id"])["status"] == "processing"

    again = run(home, "import-file", str(notes))
    assert again.code == 0, again.err
    assert f"resuming unfinished import {under_way['id']}" in again.err
    assert "completed" in again.out
    imports = ok_json(home, "imports", "list")["imports"]
    assert [(i["id"], i["status"]) for i in imports] == [(under_way["id"], "completed")]
    # and once complete, the same file is a duplicate again
    duplicate = run(home, "import-file", str(notes))
    assert duplicate.code == 1 and "already imported" in duplicate.out


def test_a_section_import_says_what_it_merged_or_skipped(tmp_path: Path) -> None:
    home = tmp_path / "home"
    notes = tmp_path / "notes.md"
    notes.write_text(
        "# Deploys\n\nThe billing service deploys to eu-west-1 every Tuesday.\n\n"
        "# Deploys again\n\nThe billing service deploys to eu-west-1 every Tuesday.\n\n"
        "# Coffee\n\nThe team prefers dark roast coffee from the shop on the corner.\n",
        encoding="utf-8",
    )
    [result] = ok_json(home, "import-file", str(notes), "--strategy", "section")
    assert result["status"] == "completed" and result["memories_created"] == 2
    assert result["notes"] == [
        "1 section repeated what memory already holds and was not stored again"
    ]
    assert "1 section repeated" in ok(home, "imports", "show", result["id"][:8]).out
