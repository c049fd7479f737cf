"""Transcripts a conversation can be rebuilt from: Claude Code JSONL, OpenClaw JSONL, a JSON list.

* Claude Code: ``user`` / ``assistant`` entries with the API ``message`` inside;
  what counts as conversation is what :func:`memoryd.text.transcript.entry_text`
  says (text blocks, no meta, sidechain or injected context), and consecutive
  entries of one role are one message, dated by the first.
* OpenClaw session JSONL: ``{"type": "message", "id", "timestamp", "message":
  {"role", "content"}}`` lines among ``session`` and other entries.
* A plain JSON list of ``{role, content}`` objects (optionally ``id`` and
  ``created_at``).

Every line is checked before anything is stored: a line that is not JSON, or a
message line without a role or content, refuses the whole transcript, naming
the line, so a transcript is never half imported.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from memoryd import wellformed
from memoryd.errors import ValidationError
from memoryd.text.transcript import clean, entry_text

FORMATS = ("claude-code", "openclaw", "json")
MAX_TRANSCRIPT_BYTES = 64 * 1024 * 1024


def _text(content: Any) -> str | None:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            p.get("text")
            for p in content
            if isinstance(p, Mapping)
            and p.get("type") in (None, "text")
            and isinstance(p.get("text"), str)
        ]
        return "\n".join(str(p) for p in parts)
    return None


def read_transcript(
    source: str | Path, format: str | None = None
) -> tuple[list[dict[str, Any]], str]:
    """The messages of a transcript file (a ``Path``) or text, and the format it was in."""
    if format is not None and format not in FORMATS:
        raise ValidationError(f"unknown transcript format {format!r}; one of {', '.join(FORMATS)}")
    if isinstance(source, Path):
        try:
            if source.stat().st_size > MAX_TRANSCRIPT_BYTES:
                raise ValidationError(f"{source} is over {MAX_TRANSCRIPT_BYTES} bytes")
            text = source.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ValidationError(f"cannot read the transcript {source}: {exc}") from None
    else:
        text = source
    if format == "json" or (format is None and text.lstrip().startswith("[")):
        messages, found = _json_list(text), "json"
    else:
        messages, found = _jsonl(text, format)
    wrong = wellformed.problem(messages)
    if wrong is not None:
        raise ValidationError(f"the transcript: {wrong}")
    return messages, found


def _json_list(text: str) -> list[dict[str, Any]]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValidationError(
            f"the transcript is not JSON (line {exc.lineno}: {exc.msg})"
        ) from None
    if not isinstance(data, list):
        raise ValidationError("a JSON transcript must be a list of {role, content} objects")
    out = []
    for i, item in enumerate(data):
        if not isinstance(item, Mapping) or not isinstance(item.get("role"), str):
            raise ValidationError(f"transcript item {i} needs a string 'role'")
        content = _text(item.get("content"))
        if content is None:
            raise ValidationError(f"transcript item {i} needs 'content' (text or text parts)")
        message: dict[str, Any] = {"role": item["role"], "content": content}
        for key in ("id", "created_at"):
            if item.get(key) is not None:
                message[key] = item[key]
        out.append(message)
    return out


def _jsonl(text: str, format: str | None) -> tuple[list[dict[str, Any]], str]:
    claude: list[tuple[str, str, str | None]] = []
    openclaw: list[dict[str, Any]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except ValueError as exc:
            raise ValidationError(f"transcript line {number} is not JSON: {exc}") from None
        if not isinstance(entry, Mapping):
            raise ValidationError(f"transcript line {number} is not a JSON object")
        kind = entry.get("type")
        if kind == "message" and format != "claude-code":
            message = entry.get("message")
            if not isinstance(message, Mapping) or not isinstance(message.get("role"), str):
                raise ValidationError(
                    f"transcript line {number}: a message entry needs message.role"
                )
            content = _text(message.get("content"))
            if content is None:
                raise ValidationError(
                    f"transcript line {number}: message.content must be text or parts"
                )
            if message["role"] not in ("user", "assistant") or not clean(content):
                continue
            item: dict[str, Any] = {"role": message["role"], "content": clean(content)}
            if isinstance(entry.get("id"), str):
                item["id"] = entry["id"]
            if isinstance(entry.get("timestamp"), str):
                item["created_at"] = entry["timestamp"]
            openclaw.append(item)
        elif kind in ("user", "assistant") and format != "openclaw":
            if not isinstance(entry.get("message"), Mapping):
                raise ValidationError(f"transcript line {number}: a {kind} entry needs a message")
            said = entry_text(entry)
            if said is not None:
                claude.append(said)
    if claude and openclaw:
        raise ValidationError("the transcript mixes Claude Code and OpenClaw entries")
    if openclaw:
        return openclaw, "openclaw"
    return _merge(claude), "claude-code"


def _merge(entries: list[tuple[str, str, str | None]]) -> list[dict[str, Any]]:
    """Consecutive entries of one role as one message, dated by its first entry, whole."""
    out: list[dict[str, Any]] = []
    for role, text, at in entries:
        if out and out[-1]["role"] == role:
            out[-1]["content"] += "\n\n" + text
            continue
        message: dict[str, Any] = {"role": role, "content": text}
        if at:
            message["created_at"] = at
        out.append(message)
    return out
