"""The OpenCode plugin, driven as OpenCode drives it, against a real ``memoryd serve``.

``integrations/opencode/test/session.ts`` loads the built plugin module and
calls its hooks in OpenCode's order, every value typed by the host's own
packages (``@opencode-ai/plugin``, ``@opencode-ai/sdk``). A preference
stated in one session is in the system prompt of the next; "remember that …"
becomes a pinned memory; with memoryd stopped the session goes on with one
warning.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

from build_plugins import NODE, ROOT, node_env
from conftest import Memoryd
from server_harness import free_port

DRIVER = ROOT / "opencode" / "test" / "dist" / "session.js"
DRIVER_TIMEOUT_S = 120
PREFERENCE = "I prefer pnpm over npm for every JavaScript project"
QUESTION = "Which package manager should the new service use?"


def drive(
    steps: list[dict[str, Any]], options: dict[str, Any], directory: Path
) -> tuple[list[dict[str, Any]], str]:
    """(what each step recorded, the plugin's stderr)."""
    ran = subprocess.run(
        [str(NODE), str(DRIVER)],
        input=json.dumps(
            {"options": options, "directory": str(directory), "steps": steps}
        ).encode(),
        capture_output=True,
        env=node_env(),
        timeout=DRIVER_TIMEOUT_S,
    )
    assert ran.returncode == 0, ran.stderr.decode()
    records: list[dict[str, Any]] = json.loads(ran.stdout)
    return records, ran.stderr.decode()


def searchable(memoryd: Memoryd, query: str, text: str, timeout_s: float = 60) -> None:
    """Wait until memoryd finds ``text`` for ``query``: captured turns get their vectors
    after the capture is answered."""
    deadline = time.monotonic() + timeout_s
    while True:
        hits = memoryd.http.get("/v1/memories/search", params={"q": query}).json()["results"]
        if any(text in h["memory"]["content"] for h in hits):
            return
        assert time.monotonic() < deadline, hits
        time.sleep(0.2)


def test_a_preference_of_one_session_is_injected_in_the_next(
    plugins_built: None, memoryd: Memoryd, tmp_path: Path
) -> None:
    options = {"apiUrl": memoryd.url, "apiKey": memoryd.key}
    first, _ = drive(
        [
            {
                "session": "ses_one",
                "user": f"{PREFERENCE}. Set up the repo.",
                "answer": "Using pnpm then.",
            },
            {"session": "ses_one", "user": "Add a lint script.", "answer": "Added `pnpm lint`."},
        ],
        options,
        tmp_path,
    )
    assert "pnpm" not in "".join(first[0]["system"])  # nothing known yet
    captured = memoryd.http.get("/v1/memories", params={"memory_type": "session"}).json()[
        "memories"
    ]
    assert any(PREFERENCE in m["content"] for m in captured)
    assert all({"opencode", "auto-captured"} <= set(m["tags"]) for m in captured)
    searchable(memoryd, QUESTION, "pnpm over npm")

    second, _ = drive(
        [{"session": "ses_two", "user": QUESTION, "answer": "pnpm."}],
        options,
        tmp_path,
    )
    system = "\n".join(second[0]["system"])
    assert "<memoryd-context>" in system and "pnpm over npm" in system


def test_remember_that_becomes_a_pinned_memory(
    plugins_built: None, memoryd: Memoryd, tmp_path: Path
) -> None:
    said = "Remember that the staging database is called orca-staging. Now run the tests."
    records, _ = drive(
        [
            {"session": "ses_rem", "user": said, "answer": "Tests pass."},
            {
                "session": "ses_rem",
                "user": said,
                "answer": "Still passing.",
            },  # said twice, kept once
            {
                "session": "ses_rem",
                "tool": {"name": "memory_search", "args": {"query": "staging database name"}},
            },
        ],
        {"apiUrl": memoryd.url, "apiKey": memoryd.key},
        tmp_path,
    )
    pinned = memoryd.http.get("/v1/memories", params={"tags": "remembered"}).json()["memories"]
    assert [(m["content"], m["memory_type"], m["source"]) for m in pinned] == [
        ("Remember that the staging database is called orca-staging.", "pinned", "opencode")
    ]
    found = json.loads(records[2]["tool"])
    assert found["ok"] and "orca-staging" in json.dumps(found["data"])


def test_with_memoryd_stopped_the_session_goes_on_with_one_warning(
    plugins_built: None, tmp_path: Path
) -> None:
    dead = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    records, stderr = drive(
        [
            {
                "session": "ses_down",
                "user": "Remember that deploys happen on Tuesdays.",
                "answer": "Noted.",
            },
            {"session": "ses_down", "user": "What next?", "answer": "Tests.", "compact": True},
            {"session": "ses_down", "tool": {"name": "memory_store", "args": {"content": "x"}}},
        ],
        {"apiUrl": dead, "apiKey": "mk_not_logged", "timeoutMs": 2000},
        tmp_path,
    )
    assert records[0]["system"] == ["You are opencode, an interactive CLI tool."]
    assert records[1]["context"] == []
    assert json.loads(records[2]["tool"])["ok"] is False  # the tool answers, the host goes on
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "memoryd at" in lines[0] and "unreachable" in lines[0], stderr
    assert "mk_not_logged" not in stderr
