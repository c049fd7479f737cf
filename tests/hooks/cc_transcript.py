"""Claude Code transcripts (JSONL) and hook payloads, in the shapes Claude Code writes them.

Every transcript line is one entry: ``user`` / ``assistant`` entries with the
API ``message`` inside, one assistant reply split over several entries that
share ``message.id`` (thinking, text, tool_use each on its own line), tool
results coming back as ``user`` entries, plus the entries that are not
conversation (``summary``, ``file-history-snapshot``, ``system``, meta and
command entries, sidechain entries of sub-agents).
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

SESSION = "3f6a2a5e-1c9b-4bbf-9d0e-6b3c8f1d2a11"
CWD = "/home/dev/projects/billing"
START = datetime(2026, 3, 2, 9, 30, tzinfo=UTC)


@dataclass
class Transcript:
    """Builds a transcript entry by entry, each chained to the one before, a second apart."""

    path: Path
    session_id: str = SESSION
    entries: list[dict[str, Any]] = field(default_factory=list)
    _parent: str | None = None
    _tick: int = 0

    def _base(self, kind: str, **extra: Any) -> dict[str, Any]:
        self._tick += 1
        entry_id = str(uuid.uuid4())
        entry = {
            "parentUuid": self._parent,
            "isSidechain": False,
            "userType": "external",
            "cwd": CWD,
            "sessionId": self.session_id,
            "version": "2.0.14",
            "gitBranch": "main",
            "type": kind,
            "uuid": entry_id,
            "timestamp": (START + timedelta(seconds=self._tick))
            .isoformat(timespec="milliseconds")
            .replace("+00:00", "Z"),
            **extra,
        }
        self._parent = entry_id
        self.entries.append(entry)
        return entry

    def user(self, text: str, **flags: Any) -> Transcript:
        self._base("user", message={"role": "user", "content": text}, **flags)
        return self

    def user_blocks(self, *blocks: dict[str, Any], **flags: Any) -> Transcript:
        self._base("user", message={"role": "user", "content": list(blocks)}, **flags)
        return self

    def assistant(self, *blocks: dict[str, Any], **flags: Any) -> Transcript:
        """One reply, one entry per content block, as Claude Code streams it."""
        message_id = f"msg_{uuid.uuid4().hex[:24]}"
        request = f"req_{uuid.uuid4().hex[:24]}"
        for block in blocks:
            self._base(
                "assistant",
                requestId=request,
                message={
                    "id": message_id,
                    "type": "message",
                    "role": "assistant",
                    "model": "claude-sonnet-4-5-20250929",
                    "content": [block],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {"input_tokens": 12, "output_tokens": 30},
                },
                **flags,
            )
        return self

    def say(self, text: str) -> Transcript:
        return self.assistant(text_block(text))

    def tool_round(self, name: str, result: str) -> Transcript:
        """The assistant calls a tool and the result comes back as a user entry."""
        tool_id = f"toolu_{uuid.uuid4().hex[:24]}"
        self.assistant(
            {"type": "tool_use", "id": tool_id, "name": name, "input": {"file_path": "x.py"}}
        )
        self._base(
            "user",
            message={
                "role": "user",
                "content": [{"tool_use_id": tool_id, "type": "tool_result", "content": result}],
            },
            toolUseResult={"stdout": result, "stderr": "", "interrupted": False},
        )
        return self

    def raw(self, entry: dict[str, Any]) -> Transcript:
        self.entries.append(entry)
        return self

    def write(self) -> Path:
        with self.path.open("w", encoding="utf-8") as out:
            for entry in self.entries:
                out.write(json.dumps(entry, ensure_ascii=False, separators=(",", ":")) + "\n")
        return self.path


def text_block(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def thinking_block(text: str) -> dict[str, Any]:
    return {"type": "thinking", "thinking": text, "signature": "EqQBCkYIBxgCKkB"}


def conversation(path: Path) -> Transcript:
    """A realistic session: a preference, a decision, tool work, noise of every kind."""
    t = Transcript(path)
    t.raw({"type": "summary", "summary": "Billing service deploys", "leafUuid": str(uuid.uuid4())})
    t.raw(
        {
            "type": "file-history-snapshot",
            "messageId": str(uuid.uuid4()),
            "snapshot": {"trackedFileBackups": {}},
            "isSnapshotUpdate": False,
        }
    )
    t.user(
        "<command-name>/clear</command-name>\n<command-message>clear</command-message>\n"
        "<command-args></command-args>"
    )
    t.user(
        "Caveat: the messages below were generated by the user while running local commands.",
        isMeta=True,
    )
    t.user("I always use pnpm, never npm, in this repo. Can you check why the billing tests fail?")
    t.assistant(
        thinking_block("The user wants me to look at the tests."),
        text_block("I'll run the billing tests first."),
    )
    t.tool_round("Bash", "FAILED tests/test_invoice.py::test_vat - KeyError: 'eu'")
    t.say("The VAT table has no 'eu' key; the invoice code expects it.")
    t.user_blocks(
        text_block(
            "Use the country code instead.\n<system-reminder>Todo list is empty.</system-reminder>"
        )
    )
    t.say("Done: invoices now look up VAT by country code and the tests pass.")
    t.assistant(text_block("Sub-agent chatter"), isSidechain=True)
    t.user("[Request interrupted by user]")
    t.raw(
        {
            "type": "system",
            "subtype": "compact_boundary",
            "content": "Conversation compacted",
            "timestamp": "2026-03-02T09:40:00.000Z",
            "uuid": str(uuid.uuid4()),
        }
    )
    t.user("We deploy the billing service to eu-west-1 with GitHub Actions.")
    t.say("Noted: billing deploys to eu-west-1 through GitHub Actions.")
    return t


def payload(event: str, transcript: Path | None = None, **extra: Any) -> dict[str, Any]:
    """A hook's stdin, with the common fields Claude Code sends with every event."""
    body: dict[str, Any] = {
        "session_id": SESSION,
        "transcript_path": str(transcript) if transcript else f"/tmp/{SESSION}.jsonl",
        "cwd": CWD,
        "permission_mode": "default",
        "hook_event_name": event,
    }
    body.update(extra)
    return body
