"""Bootstrap from a Claude Code transcript, an OpenClaw one and a JSON list; idempotent; strict."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from memoryd.context import ContextEngine
from memoryd.errors import NotFoundError, ValidationError

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "hooks"))
from cc_transcript import Transcript, text_block


def claude_code(path: Path) -> Path:
    t = Transcript(path)
    t.raw({"type": "summary", "summary": "Billing", "leafUuid": "x"})
    t.user("We deploy the billing service on Fridays at 16:00.")
    t.assistant(text_block("Noted: Friday deploys at 16:00."))
    t.tool_round("Read", "file contents")
    t.user("Use Postgres 16, not MySQL.")
    t.assistant(text_block("Switching the plan to Postgres 16."))
    return t.write()


def test_claude_code_and_json_list_rebuild_the_same_conversation(
    quiet_engine: ContextEngine, tmp_path: Path
) -> None:
    path = claude_code(tmp_path / "session.jsonl")
    first = quiet_engine.bootstrap("cc", path)
    assert first["format"] == "claude-code" and first["stored"] == 4
    cc = quiet_engine.expand("cc", query="Postgres")  # a message hit expands to itself
    assert cc["messages"]
    cc_messages = [
        (m["role"], m["content"])
        for m in quiet_engine.assemble("cc", 4000).messages
        if m["role"] != "system"
    ]
    plain = tmp_path / "plain.json"
    plain.write_text(
        json.dumps([{"role": r, "content": c} for r, c in cc_messages]), encoding="utf-8"
    )
    assert quiet_engine.bootstrap("plain", plain)["format"] == "json"
    plain_messages = [
        (m["role"], m["content"])
        for m in quiet_engine.assemble("plain", 4000).messages
        if m["role"] != "system"
    ]
    assert plain_messages == cc_messages
    assert cc_messages[0] == ("user", "We deploy the billing service on Fridays at 16:00.")
    again = quiet_engine.bootstrap("cc", path)
    assert again["stored"] == 0 and again["duplicates"] == 4
    assert quiet_engine.bootstrap("plain", plain)["stored"] == 0
    assert quiet_engine.conversation("cc")["messages"] == 4


def test_openclaw_session_jsonl(quiet_engine: ContextEngine, tmp_path: Path) -> None:
    lines = [
        {"type": "session", "id": "s1", "timestamp": "2026-04-01T10:00:00Z"},
        {
            "type": "message",
            "id": "a1",
            "timestamp": "2026-04-01T10:00:01Z",
            "message": {"role": "user", "content": [{"type": "text", "text": "My cat is Miso."}]},
        },
        {
            "type": "message",
            "id": "a2",
            "timestamp": "2026-04-01T10:00:02Z",
            "message": {"role": "assistant", "content": "Hello Miso!"},
        },
    ]
    path = tmp_path / "openclaw.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    result = quiet_engine.bootstrap("oc", path)
    assert result["format"] == "openclaw" and result["message_ids"] == ["a1", "a2"]
    assert quiet_engine.bootstrap("oc", path)["duplicates"] == 2


def test_malformed_transcript_names_the_line_and_stores_nothing(
    quiet_engine: ContextEngine, tmp_path: Path
) -> None:
    path = claude_code(tmp_path / "broken.jsonl")
    with path.open("a", encoding="utf-8") as out:
        out.write('{"type": "user", "message": {"role": "user", "content": "half\n')
    lines = len(path.read_text(encoding="utf-8").splitlines())
    with pytest.raises(ValidationError, match=f"line {lines} is not JSON"):
        quiet_engine.bootstrap("broken", path)
    with pytest.raises(NotFoundError):
        quiet_engine.conversation("broken")
