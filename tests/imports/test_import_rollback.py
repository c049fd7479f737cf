"""Rollback leaves the store exactly as it was; an import killed mid-way is never half-done."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from import_client import imported, search, wait_import
from samples import handbook, long_text
from scripted_llm import Recorded, Reply, ScriptedLLM
from server_harness import RunningServer, TenantClient, memoryd_command, spawn_server, stop_process

from memoryd.prompts import RECONCILE_SYSTEM
from memoryd.store import DB_FILENAME

QUESTIONS = ("what does the user like to drink", "where does the user live", "deploy on friday")


def snapshot(server: RunningServer, tenant: TenantClient) -> dict[str, Any]:
    """Every row the tenant's memories consist of, read from the SQLite file itself."""
    server.service.engine.background.submit(lambda: None).result()  # recall counts landed
    with sqlite3.connect(server.home / DB_FILENAME) as conn:
        cursor = conn.execute(
            "SELECT * FROM memories WHERE tenant_id = ? ORDER BY id", (tenant.id,)
        )
        seq = [c[0] for c in cursor.description].index("seq")
        memories = [row[:seq] + row[seq + 1 :] for row in cursor.fetchall()]
        history = conn.execute(
            "SELECT * FROM memory_history WHERE tenant_id = ? ORDER BY id", (tenant.id,)
        ).fetchall()
        messages = conn.execute(
            "SELECT * FROM session_messages WHERE tenant_id = ? ORDER BY id", (tenant.id,)
        ).fetchall()
    # seq is the store's change counter: it moves on, whatever changes back
    return {
        "memories": memories,
        "history": history,
        "messages": messages,
    }


def ranked(tenant: TenantClient) -> list[list[str]]:
    return [
        [m["id"] for m in search(tenant, q, memory_type=t)]
        for q in QUESTIONS
        for t in ("insight", "session")
    ]


def test_rollback_restores_exactly_what_was_there(
    server: RunningServer, tenant: TenantClient
) -> None:
    first = [("user", "I love coffee."), ("user", "I live in Berlin.")]
    body = {"messages": [{"role": r, "content": c} for r, c in first], "session_id": "before"}
    task = tenant.http.post("/v1/memories", json=body).json()["task_id"]
    deadline = time.monotonic() + 60
    while tenant.http.get(f"/v1/tasks/{task}").json()["status"] != "completed":
        assert time.monotonic() < deadline
        time.sleep(0.05)
    tenant.http.post("/v1/memories", json={"content": "Deploys are frozen on Fridays."})
    results_before = ranked(tenant)
    before = snapshot(server, tenant)

    chat = "\n".join(
        json.dumps({"role": "user", "content": c})
        for c in (
            "Actually I prefer tea now.",
            "I live in Berlin.",
            "I moved my desk to the window.",
        )
    ).encode()
    task = imported(tenant, "chat.jsonl", chat)
    notes = imported(tenant, "handbook.md", handbook().encode())
    assert task["decisions"].get("supersede") == 1, task  # it changed a memory that was there
    assert snapshot(server, tenant) != before

    for done in (notes, task):
        undone = tenant.http.post(f"/v1/imports/{done['id']}/rollback").json()
        assert undone["import_status"] == "rolled_back" and undone["deleted_memories"] > 0
    assert tenant.http.post(f"/v1/imports/{task['id']}/rollback").json()["deleted_memories"] == 0
    assert snapshot(server, tenant) == before  # ids, contents, vectors, history, raw messages
    assert ranked(tenant) == results_before
    assert tenant.http.get(f"/v1/imports/{task['id']}").json()["status"] == "rolled_back"
    # rolled back content may be imported again without force
    assert imported(tenant, "chat.jsonl", chat)["status"] == "completed"


def test_a_running_import_cannot_be_rolled_back_or_rerun(tenant: TenantClient) -> None:
    response = tenant.http.post("/v1/imports", files={"file": ("story.txt", long_text().encode())})
    import_id = response.json()["id"]
    for action in ("rollback", "intelligence"):
        refused = tenant.http.post(f"/v1/imports/{import_id}/{action}")
        if refused.status_code == 200:  # it finished first on a fast machine: nothing to check
            break
        assert refused.status_code == 400
    wait_import(tenant, import_id)


# ---------------------------------------------------------------------- crash


def slow_summaries(request: Recorded) -> Reply:
    """A slow model, so the server can be killed while an import is half-way."""
    if request.messages[0]["content"] == RECONCILE_SYSTEM:
        return Reply(json.dumps({"decisions": []}))
    first = request.messages[-1]["content"].strip().splitlines()[0].lstrip("# ")
    return Reply(json.dumps({"l0_abstract": f"Summary: {first}"}), delay_s=0.4)


def progress(home: Path, import_id: str) -> tuple[str, int, int]:
    with sqlite3.connect(home / DB_FILENAME, timeout=30) as conn:
        status, detail = conn.execute(
            "SELECT status, detail FROM import_tasks WHERE id = ?", (import_id,)
        ).fetchone()
        count = conn.execute(
            "SELECT COUNT(*) FROM memories WHERE source = 'import:handbook.md'"
        ).fetchone()[0]
    return status, json.loads(detail).get("extraction_progress", 0), count


def test_an_import_killed_mid_way_resumes_from_a_clean_slate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    with ScriptedLLM(slow_summaries) as llm:
        monkeypatch.setenv("MEMORYD_LLM_BASE_URL", llm.url)
        monkeypatch.setenv("MEMORYD_LLM_MODEL", "test-model")
        process, url = spawn_server(home, "--no-auth")
        try:
            with httpx.Client(base_url=url, timeout=30) as http:
                files = {"file": ("handbook.md", handbook().encode())}
                import_id = http.post("/v1/imports", files=files).json()["id"]
            deadline = time.monotonic() + 60
            while progress(home, import_id)[1] < 2:  # two sections stored, more to come
                assert time.monotonic() < deadline, progress(home, import_id)
                time.sleep(0.02)
        finally:
            process.send_signal(signal.SIGKILL)
            process.wait(timeout=30)
        status, done, partial = progress(home, import_id)
        assert status == "processing" and 2 <= done < 8 and partial >= 2  # visible, and said so

        process, url = spawn_server(home, "--no-auth")
        try:
            with httpx.Client(base_url=url, timeout=30) as http:
                deadline = time.monotonic() + 60
                while (task := http.get(f"/v1/imports/{import_id}").json())[
                    "status"
                ] == "processing":
                    assert time.monotonic() < deadline, task
                    time.sleep(0.1)
                assert task["status"] == "completed", task
                assert task["memories_created"] == 8 == progress(home, import_id)[2]  # no twins
                listed = http.get("/v1/memories", params={"limit": 100}).json()["memories"]
                summaries = sorted(m["l0_abstract"] for m in listed)
                assert len(summaries) == len(set(summaries)) == 8
        finally:
            stop_process(process)


# ---------------------------------------------------------------------- the command line
def test_import_file_command_takes_files_and_folders(tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    (folder / "sub").mkdir(parents=True)
    (folder / "handbook.md").write_text(handbook())
    (folder / "sub" / "todo.txt").write_text("Call the plumber on Monday.")
    (folder / "photo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")  # not importable: left alone
    binary = tmp_path / "blob.txt"
    binary.write_bytes(b"\x00\x01\x02binary")
    home = tmp_path / "home"
    run = subprocess.run(
        [*memoryd_command(home, "--json", "import-file", str(folder), str(binary))],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 1, run.stderr  # one file was refused
    results = {Path(r["path"]).name: r for r in json.loads(run.stdout)}
    assert set(results) == {"handbook.md", "todo.txt", "blob.txt"}
    assert results["handbook.md"]["status"] == "completed"
    assert results["handbook.md"]["strategy"] == "section"
    assert results["todo.txt"]["memories_created"] == 1
    assert (
        results["blob.txt"]["status"] == "refused" and "binary" in results["blob.txt"]["errors"][0]
    )
    again = subprocess.run(
        [*memoryd_command(home, "--json", "import-file", str(folder / "sub" / "todo.txt"))],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert again.returncode == 1, again.stdout
    assert "already imported" in json.loads(again.stdout)[0]["errors"][0]
