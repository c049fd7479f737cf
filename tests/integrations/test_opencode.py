"""The OpenCode plugin, driven as OpenCode drives it, against a real ``memoryd serve``.

``integrations/opencode/test/session.ts`` loads the built plugin module and
calls its hooks in OpenCode's order (the title call's system transform first,
then the agent's messages and system transforms for each of its requests),
every value typed by the host's own packages (``@opencode-ai/plugin``,
``@opencode-ai/sdk``). A preference stated in one session is recalled into
each request the agent sends in the next, once, and never into the title or
compaction calls; "remember that …" becomes a pinned memory and a bare
"remember this" nudges the agent; with memoryd stopped the session goes on
with one warning. ``tests/hosts/test_opencode_cli.py`` runs the real CLI.
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
AGENT_SYSTEM = ["You are opencode, an interactive CLI tool."]
TITLE_SYSTEM = ["You are a title generator. You output ONLY a thread title."]
FENCE = "<memoryd-context>"
NUDGE = "Call memory_store"


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


def test_a_preference_of_one_session_is_recalled_into_each_agent_request_of_the_next(
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
    assert first[0]["sent"] == [[f"{PREFERENCE}. Set up the repo."]]  # nothing known yet
    captured = memoryd.http.get("/v1/memories", params={"memory_type": "session"}).json()[
        "memories"
    ]
    assert any(PREFERENCE in m["content"] for m in captured)
    assert all({"opencode", "auto-captured"} <= set(m["tags"]) for m in captured)
    searchable(memoryd, QUESTION, "pnpm over npm")

    second, _ = drive(
        [
            # a tool call: the agent's loop sends two requests for the one message
            {"session": "ses_two", "user": QUESTION, "requests": 2, "answer": "pnpm."},
            {"session": "ses_two", "compact": True},
            {"session": "ses_two", "user": "And for linting?", "answer": "pnpm lint."},
        ],
        options,
        tmp_path,
    )
    turn, compaction, later = second
    # the title call comes first and gets nothing, its copy of the history neither
    assert turn["title"] == {"system": TITLE_SYSTEM, "messages": [QUESTION]}
    # each request of the agent: the block once, before the user's words; the system as it was
    assert turn["system"] == AGENT_SYSTEM
    assert len(turn["sent"]) == 2
    for block, words in turn["sent"]:
        assert block.count(FENCE) == 1 and "pnpm over npm" in block, block
        assert words == QUESTION
    assert turn["sent"][0] == turn["sent"][1]  # recalled once for the message, sent with each
    # compaction: the memories in its context, none in the history it summarises
    assert any("pnpm over npm" in c for c in compaction["context"])
    assert not [t for t in compaction["compacted"] if FENCE in t]
    # the next message gets its own recall, and only its request carries a block
    ((block, words),) = later["sent"]
    assert block.count(FENCE) == 1 and words == "And for linting?"
    assert "title" not in later


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
            # as `opencode run "…"` sends it: wrapped in quote marks, kept once all the same
            {"session": "ses_rem", "user": f'"{said}"', "answer": "Passing."},
            {
                "session": "ses_rem",
                "tool": {"name": "memory_search", "args": {"query": "staging database name"}},
            },
        ],
        {"apiUrl": memoryd.url, "apiKey": memoryd.key},
        tmp_path,
    )
    assert not [t for r in records[:3] for t in r["sent"][0] if NUDGE in t]  # nothing to nudge
    pinned = memoryd.http.get("/v1/memories", params={"tags": "remembered"}).json()["memories"]
    assert [(m["content"], m["memory_type"], m["source"]) for m in pinned] == [
        ("Remember that the staging database is called orca-staging.", "pinned", "opencode")
    ]
    turns = memoryd.http.get("/v1/memories", params={"memory_type": "session", "limit": 100})
    said_here = {
        m["content"]
        for m in turns.json()["memories"]
        if m["session_id"] == "ses_rem" and m["content"].startswith("user:")
    }
    assert said_here == {f"user: {said}"}  # the quoted one is the same turn
    found = json.loads(records[3]["tool"])
    assert found["ok"] and "orca-staging" in json.dumps(found["data"])


def test_a_bare_remember_nudges_the_agent_in_the_requests_of_its_turn(
    plugins_built: None, memoryd: Memoryd, tmp_path: Path
) -> None:
    records, _ = drive(
        [
            {"session": "ses_bare", "user": "Remember this.", "requests": 2, "answer": "Stored."},
            {"session": "ses_bare", "user": "Thanks.", "answer": "Welcome."},
        ],
        {"apiUrl": memoryd.url, "apiKey": memoryd.key},
        tmp_path,
    )
    nudged, thanked = records
    for sent in nudged["sent"]:
        assert len(sent) == 2 and NUDGE in sent[0] and sent[1] == "Remember this.", sent
    assert not [t for t in thanked["sent"][0] if NUDGE in t]


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
    assert records[0]["system"] == AGENT_SYSTEM
    assert records[0]["sent"] == [["Remember that deploys happen on Tuesdays."]]
    assert records[1]["sent"] == [["What next?"]] and records[1]["context"] == []
    assert json.loads(records[2]["tool"])["ok"] is False  # the tool answers, the host goes on
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "memoryd at" in lines[0] and "unreachable" in lines[0], stderr
    assert "mk_not_logged" not in stderr
