"""A Claude Code session, hook by hook, then ``/clear``: the next session starts where it left off.

The payloads are the JSON Claude Code sends each hook (PostToolUse with
``tool_name``/``tool_input``/``tool_response``/``tool_use_id``, Stop,
SessionEnd with ``reason``, SessionStart with ``source``), the transcript
the JSONL it writes. The hooks that matter to the restore run as processes.
"""

from __future__ import annotations

import io
import json
import re
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from cc_transcript import CWD, SESSION, Transcript, payload, text_block
from hook_helpers import clean_env, run_hook_process
from scripted_llm import Recorded, ScriptedLLM

from memoryd.continuity import Continuity
from memoryd.hooks.runner import run_hook
from memoryd.prompts.continuity import CHECKPOINT_SYSTEM, LAYER_SYSTEM
from memoryd.sdk import Memory

SUMMARY_WAIT_S = 60
NEXT_SESSION = "9c1d7e2a-5b3f-4e8d-a6c0-2f4b8e9d1c33"
GOAL = "Make the EU VAT tests pass: look VAT up by country code in src/billing/vat.py."
LAST_PROMPT = "Also add a test for Germany, then run the suite again."
SUMMARY = {
    "goal": "VAT looked up by country code, tests green",
    "progress": "vat.py rewritten, test_vat.py added; the suite still fails on rounding",
    "next_step": "Round VAT half-up in src/billing/vat.py",
    "key_findings": ["The VAT table has no 'eu' key"],
}


def in_process(command: str, body: dict[str, Any], env: dict[str, str]) -> bytes:
    out = io.BytesIO()
    code = run_hook(
        command,
        stdin=io.BytesIO(json.dumps(body).encode()),
        stdout=out,
        environ=env,
        exit_process=False,
    )
    assert code == 0
    return out.getvalue()


def tool(
    t: Transcript, name: str, arguments: dict[str, Any], result: str, error: bool = False
) -> str:
    """The assistant calls a tool; its result comes back as a user entry (is_error on failure)."""
    tool_id = f"toolu_{uuid.uuid4().hex[:24]}"
    t.assistant({"type": "tool_use", "id": tool_id, "name": name, "input": arguments})
    t.user_blocks(
        {"tool_use_id": tool_id, "type": "tool_result", "content": result, "is_error": error}
    )
    return tool_id


def post_tool_use(
    transcript: Path, name: str, arguments: dict[str, Any], tool_id: str
) -> dict[str, Any]:
    return payload(
        "PostToolUse",
        transcript,
        tool_name=name,
        tool_input=arguments,
        tool_response={"filePath": arguments.get("file_path"), "success": True},
        tool_use_id=tool_id,
    )


def wait_for_summary(home: Path, saves: int) -> None:
    """Summaries are asked for by detached processes (after Stop and SessionEnd): wait for
    both, and for the summary of the last save."""
    deadline = time.monotonic() + SUMMARY_WAIT_S
    with Memory(home) as memory:
        continuity = Continuity(memory.service, llm=None)
        while time.monotonic() < deadline:
            (saved,) = continuity.list()
            log = (home / "logs" / "hooks.log").read_text(encoding="utf-8")
            finished = log.count("summarize: checkpoint")  # one detached process each
            if saved.summary is not None and saved.summary.basis == saves and finished == 2:
                assert saved.saves == saves and saved.summary.source == "llm"
                return
            time.sleep(0.1)
    raise AssertionError((home / "logs" / "hooks.log").read_text(encoding="utf-8"))


def run_session(tmp_path: Path, env: dict[str, str]) -> None:
    """Prompts, edits of two files, a failing test run, Stop, then ``/clear`` (SessionEnd)."""
    path = tmp_path / f"{SESSION}.jsonl"
    t = Transcript(path)
    t.user(GOAL)
    t.say("I'll rewrite the VAT lookup to use the country code.")
    edit = {"file_path": "src/billing/vat.py", "old_string": "['eu']", "new_string": "[cc]"}
    edit_id = tool(t, "Edit", edit, "The file src/billing/vat.py has been updated.")
    t.write()
    in_process("post-tool-use", post_tool_use(path, "Edit", edit, edit_id), env)
    t.say("Updated the lookup.")
    t.user(LAST_PROMPT)
    write = {"file_path": "tests/test_vat.py", "content": "def test_de():\n    assert vat('DE')\n"}
    write_id = tool(t, "Write", write, "File created successfully at: tests/test_vat.py")
    t.write()
    in_process("post-tool-use", post_tool_use(path, "Write", write, write_id), env)
    run = {"command": "pytest -q tests/test_vat.py", "description": "Run the VAT tests"}
    run_id = tool(t, "Bash", run, "FAILED tests/test_vat.py::test_de - 0.19 != 0.190", error=True)
    t.write()
    ran = in_process("post-tool-use", post_tool_use(path, "Bash", run, run_id), env)
    assert ran == b""
    t.assistant(text_block("The Germany test fails on rounding; next I'll round half-up."))
    t.write()
    assert in_process("stop", payload("Stop", path, stop_hook_active=False), env) == b""
    ended = run_hook_process("session-end", payload("SessionEnd", path, reason="clear"), env)
    assert (ended.code, ended.out) == (0, ""), ended.err


def wait_for_log(home: Path, text: str, count: int = 1) -> str:
    """The hook log once ``text`` is in it ``count`` times (detached processes write it)."""
    deadline = time.monotonic() + SUMMARY_WAIT_S
    log = ""
    while time.monotonic() < deadline:
        path = home / "logs" / "hooks.log"
        log = path.read_text(encoding="utf-8") if path.exists() else ""
        if log.count(text) >= count:
            return log
        time.sleep(0.1)
    raise AssertionError(log)


def restored_after_clear(tmp_path: Path, env: dict[str, str]) -> str:
    body = payload("SessionStart", tmp_path / "next.jsonl", source="clear")
    body["session_id"] = NEXT_SESSION
    started = run_hook_process("session-start", body, env)
    assert started.code == 0, started.err
    context: str = started.json()["hookSpecificOutput"]["additionalContext"]
    assert len(context) < 10_000  # Claude Code's cut
    block = context.split("</memoryd-context>")[0] + "</memoryd-context>"
    assert "[Session restored — Last active:" in block
    assert len(block) <= 4000
    return block


def test_after_clear_the_session_start_restores_the_last_checkpoint(tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = clean_env(MEMORYD_HOME=str(home))
    run_session(tmp_path, env)
    block = restored_after_clear(tmp_path, env)
    assert f"Goal: {GOAL} (derived)" in block
    assert f'Last user message: "{LAST_PROMPT}"' in block
    assert (
        "Next step: The Germany test fails on rounding; next I'll round half-up. (derived)" in block
    )
    assert "Modified files: src/billing/vat.py, tests/test_vat.py" in block
    assert '  - Edit({"file_path": "src/billing/vat.py"' in block
    assert '  - Write({"file_path": "tests/test_vat.py"' in block
    assert '  - Bash({"command": "pytest -q tests/test_vat.py"' in block
    assert "→ Failed" in block and "→ Success" in block
    assert "Recent conversation:\n  User: " in block
    wait_for_log(home, "consolidate: session")  # the session's layers, condensed detached
    with Memory(home) as memory:
        (saved,) = Continuity(memory.service).list(agent_id="claude-code")
        gists = [
            m
            for m in memory.list(limit=100)
            if "session-memory" in m.tags and "d1" in m.tags and m.session_id == SESSION
        ]
    assert len(gists) == 1 and GOAL[:40] in gists[0].content
    assert (saved.session_id, saved.project, saved.trigger) == (SESSION, CWD, "session_end")
    assert saved.saves == 4  # two edits, Stop, SessionEnd (the test run wrote nothing)
    assert saved.summary is not None and saved.summary.source == "derived"


def test_with_an_llm_the_restore_shows_its_summary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def respond(request: Recorded) -> str:
        system = request.messages[0]["content"] if request.messages else ""
        if system == CHECKPOINT_SYSTEM:
            return json.dumps(SUMMARY)
        if system == LAYER_SYSTEM:
            return json.dumps({"text": "VAT by country code; rounding left"})
        return '{"facts": []}'

    with ScriptedLLM(respond) as llm:
        # the in-process hooks read the LLM settings from this process's environment
        monkeypatch.setenv("MEMORYD_LLM_BASE_URL", llm.url)
        monkeypatch.setenv("MEMORYD_LLM_MODEL", "scripted")
        env = clean_env(
            MEMORYD_HOME=str(tmp_path / "home"),
            MEMORYD_LLM_BASE_URL=llm.url,
            MEMORYD_LLM_MODEL="scripted",
        )
        run_session(tmp_path, env)
        wait_for_summary(tmp_path / "home", saves=4)
        wait_for_log(tmp_path / "home", "consolidate: session")
        block = restored_after_clear(tmp_path, env)
        asked = [r for r in llm.chat_requests if r.messages[0]["content"] == CHECKPOINT_SYSTEM]
    assert len(asked) == 2  # after Stop and SessionEnd; never after a tool call
    assert "tests/test_vat.py" in asked[-1].messages[1]["content"]
    assert f"Goal: {SUMMARY['goal']}\n" in block
    assert f"Progress: {SUMMARY['progress']}\n" in block
    assert f"Next step: {SUMMARY['next_step']}\n" in block
    assert "Key findings: The VAT table has no 'eu' key\n" in block
    assert "(derived)" not in block
    assert "Modified files: src/billing/vat.py, tests/test_vat.py" in block
    assert f'Last user message: "{LAST_PROMPT}"' in block


@pytest.mark.parametrize(
    "body",
    [
        b"not json",
        b"[]",
        json.dumps({"hook_event_name": "PostToolUse"}).encode(),
        json.dumps({"session_id": "s", "tool_name": "Edit", "tool_input": "oops"}).encode(),
        json.dumps({"tool_name": "Write", "tool_input": {"file_path": "a.py"}}).encode(),
    ],
)
@pytest.mark.parametrize("command", ["post-tool-use", "session-end"])
def test_malformed_payloads_exit_0_and_save_nothing(
    command: str, body: bytes, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    out = io.BytesIO()
    code = run_hook(
        command,
        stdin=io.BytesIO(body),
        stdout=out,
        environ=clean_env(MEMORYD_HOME=str(home)),
        exit_process=False,
    )
    assert (code, out.getvalue()) == (0, b"")
    with Memory(home) as memory:
        assert Continuity(memory.service).list() == []
    log = (home / "logs" / "hooks.log").read_text(encoding="utf-8")
    assert "nothing saved" in log or "no checkpoint" in log or "no events" in log


def test_the_plugin_runs_post_tool_use_for_the_editing_tools_only() -> None:
    hooks = json.loads(
        (Path(__file__).parents[2] / "integrations/claude-code/hooks/hooks.json").read_text()
    )["hooks"]
    (group,) = hooks["PostToolUse"]
    assert group["hooks"][0]["command"] == "memoryd hook post-tool-use"
    pattern = re.compile(f"^(?:{group['matcher']})$")
    for name in ("Edit", "MultiEdit", "Write", "NotebookEdit", "Bash"):
        assert pattern.match(name), name
    for name in ("Read", "Grep", "Glob", "WebFetch", "TodoWrite"):
        assert not pattern.match(name), name
    assert hooks["SessionEnd"][0]["hooks"][0]["command"] == "memoryd hook session-end"


def test_a_long_transcript_keeps_its_first_request(tmp_path: Path) -> None:
    """Past the tail a save reads, the session's first request is read from the file's start."""
    home = tmp_path / "home"
    env = clean_env(MEMORYD_HOME=str(home))
    path = tmp_path / "long.jsonl"
    t = Transcript(path)
    t.user(GOAL)
    for i in range(48):  # about 4.8 MB of tool output between the request and the edit
        tool(t, "Read", {"file_path": f"big{i}.log"}, "x" * 100_000)
    edit = {"file_path": "src/billing/vat.py", "old_string": "a", "new_string": "b"}
    edit_id = tool(t, "Edit", edit, "updated")
    t.write()
    assert path.stat().st_size > 4 * 1024 * 1024
    in_process("post-tool-use", post_tool_use(path, "Edit", edit, edit_id), env)
    with Memory(home) as memory:
        (saved,) = Continuity(memory.service, llm=None).list()
    assert saved.mechanical.first_user_message == GOAL
    assert saved.mechanical.modified_files == ["src/billing/vat.py"]
