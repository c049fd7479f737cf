"""The recent conversation, read from the end of a Claude Code transcript (JSONL).

A transcript grows for the whole session and holds every tool call and
tool result, so it can be many megabytes; a hook only needs the last few
turns. It is read backwards in blocks and never past ``MAX_SCAN_BYTES``.

What counts as a turn is what a person said and what the assistant
answered in words: ``text`` blocks of ``user`` and ``assistant`` entries.
Tool calls and results, thinking, meta and command entries, sub-agent
(sidechain) chatter and the compaction summary are not conversation.
Claude Code writes one assistant reply as several entries (one per content
block, tool round-trips in between), so consecutive entries of one role
are one turn. Context this plugin injected (``<memoryd-context>``) and
Claude Code's ``<system-reminder>`` blocks are cut out, so recall is never
captured back as if the user had said it.

Limits (seed 000 §3.1): the last 10 turns on Stop, 15 before a compaction,
each cut to 2,000 characters; fewer than 2 turns is not worth a capture.
"""

from __future__ import annotations

import json
import logging
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from memoryd.privacy import MEMORYD_FENCE_TAG as FENCE_TAG

log = logging.getLogger(__name__)

STOP_TURNS = 10
PRE_COMPACT_TURNS = 15
MAX_TURN_CHARS = 2000
MIN_TURNS = 2
BLOCK_BYTES = 64 * 1024
MAX_SCAN_BYTES = 16 * 1024 * 1024
# one entry bigger than this is a tool result holding a file, not a turn worth parsing
MAX_ENTRY_BYTES = 2 * 1024 * 1024

ROLES = ("user", "assistant")
SKIP_FLAGS = (
    "isMeta",
    "isSidechain",
    "isCompactSummary",
    "isVisibleInTranscriptOnly",
    "isApiErrorMessage",
)
_INJECTED = re.compile(
    rf"<(?P<tag>{re.escape(FENCE_TAG)}|system-reminder)\b[^>]*>.*?(?:</(?P=tag)\s*>|$)",
    re.IGNORECASE | re.DOTALL,
)
# slash commands and their output, as Claude Code records them in user entries
_COMMAND = re.compile(r"^\s*<(?:command-[a-z]+|local-command-[a-z]+)>", re.IGNORECASE)
_INTERRUPTED = "[Request interrupted by user"


@dataclass(frozen=True)
class Turn:
    role: str
    content: str
    created_at: str | None = None

    def message(self) -> dict[str, Any]:
        """The turn as an ingest message (reference §4.3), dated when the transcript says when."""
        out: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.created_at:
            out["created_at"] = self.created_at
        return out


def clean(text: str) -> str:
    return _INJECTED.sub("", text).strip()


def entry_text(entry: Mapping[str, Any]) -> tuple[str, str, str | None] | None:
    """``(role, text, timestamp)`` of a transcript entry that is conversation, else None."""
    kind = entry.get("type")
    message = entry.get("message")
    if kind not in ROLES or not isinstance(message, Mapping):
        return None
    if any(entry.get(flag) for flag in SKIP_FLAGS):
        return None
    role = message.get("role", kind)
    if role not in ROLES:
        return None
    content = message.get("content")
    if isinstance(content, str):
        parts = [content]
    elif isinstance(content, list):
        parts = [
            block["text"]
            for block in content
            if isinstance(block, Mapping)
            and block.get("type") == "text"
            and isinstance(block.get("text"), str)
        ]
    else:
        return None
    text = clean("\n".join(parts))
    if not text or _COMMAND.match(text) or text.startswith(_INTERRUPTED):
        return None
    stamp = entry.get("timestamp")
    return role, text, stamp if isinstance(stamp, str) else None


def lines_backwards(handle: BinaryIO, max_bytes: int = MAX_SCAN_BYTES) -> Iterator[bytes]:
    """The file's lines, last first, reading at most ``max_bytes`` from the end."""
    end = handle.seek(0, os.SEEK_END)
    start_limit = max(0, end - max_bytes)
    position = end
    tail = b""
    while position > start_limit:
        size = min(BLOCK_BYTES, position - start_limit)
        position -= size
        handle.seek(position)
        block = handle.read(size) + tail
        lines = block.split(b"\n")
        tail = lines.pop(0)  # may continue in the block before
        if len(tail) > MAX_ENTRY_BYTES:
            tail = b""  # an oversized entry: its start is not worth reading
        yield from reversed(lines)
    if position == 0 and tail:
        yield tail


def recent_turns(path: Path | str, limit: int) -> list[Turn]:
    """The last ``limit`` turns of the transcript at ``path``, oldest first."""
    entries: list[tuple[str, str, str | None]] = []  # newest first
    roles_seen = 0
    with Path(path).open("rb") as handle:
        for raw in lines_backwards(handle):
            if not raw.strip() or len(raw) > MAX_ENTRY_BYTES:
                continue
            try:
                entry = json.loads(raw)
            except ValueError:
                continue  # a line cut by a concurrent write, or not JSON
            if not isinstance(entry, Mapping):
                continue
            found = entry_text(entry)
            if found is None:
                continue
            if not entries or entries[-1][0] != found[0]:
                roles_seen += 1
                if roles_seen > limit:
                    break  # the turn before the last ``limit`` ones has begun: they are whole
            entries.append(found)
    return merge(list(reversed(entries)))[-limit:] if limit > 0 else []


def merge(entries: list[tuple[str, str, str | None]]) -> list[Turn]:
    """Consecutive entries of one role as one turn, dated by its first entry, cut to size."""
    turns: list[Turn] = []
    buffer: list[str] = []
    role: str | None = None
    stamp: str | None = None
    for entry_role, text, at in [*entries, ("", "", None)]:
        if entry_role != role:
            if role is not None and buffer:
                turns.append(Turn(role, "\n\n".join(buffer)[:MAX_TURN_CHARS], stamp))
            role, buffer, stamp = entry_role, [], at
        buffer.append(text)
    return turns


def inline_turns(payload: Mapping[str, Any], limit: int) -> list[Turn]:
    """Turns a payload carries itself (``messages`` or ``transcript``), when there is no file."""
    for name in ("messages", "transcript"):
        items = payload.get(name)
        if isinstance(items, list):
            entries: list[tuple[str, str, str | None]] = []
            for item in items:
                if not isinstance(item, Mapping):
                    continue
                role, content = item.get("role"), item.get("content")
                if role in ROLES and isinstance(content, str) and clean(content):
                    entries.append((str(role), clean(content), None))
            return merge(entries)[-limit:] if limit > 0 else []
    return []
