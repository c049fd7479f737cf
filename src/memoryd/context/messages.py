"""Incoming messages made storable: checked, large parts externalised, tokens counted.

A host sends a message as ``{role, content}`` where content is text or a list
of parts (``{"type": "text", "text": …}``, a file, a tool result), with an
optional id, time, ``tool_calls`` and ``tool_results``. A part over
``large_part_chars`` (a pasted file, a long tool result) is stored once,
content-addressed, and replaced by a pointer line naming it, its size and its
id, so summaries never carry it; expansion puts it back whole.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from memoryd.context.store import NewMessage
from memoryd.errors import ValidationError
from memoryd.inject import estimate_tokens
from memoryd.store.rows import to_us
from memoryd.validate import check_time

# framing a chat API adds around each message (role, separators)
MESSAGE_OVERHEAD_TOKENS = 4
MAX_ID_CHARS = 200
MAX_ROLE_CHARS = 100
POINTER = "[memoryd file: {name}, {size} bytes, id {id}; lcm_expand_query returns it whole]"
POINTER_RE = re.compile(r"\[memoryd file: [^\]]*?, \d+ bytes, id (sha256:[0-9a-f]{64});[^\]]*\]")


@dataclass
class Blob:
    id: str
    name: str
    content: str


@dataclass
class Prepared:
    message: NewMessage
    blobs: list[Blob] = field(default_factory=list)


def message_tokens(role: str, content: str) -> int:
    """What one message costs in a prompt, by the CJK-aware estimate."""
    return estimate_tokens(content) + estimate_tokens(role) + MESSAGE_OVERHEAD_TOKENS


def _blob_id(content: str) -> str:
    return "sha256:" + hashlib.sha256(content.encode("utf-8")).hexdigest()


class _Parts:
    """Collects the blobs of one message while its parts are flattened."""

    def __init__(self, limit: int, index: int) -> None:
        self.limit = limit
        self.index = index
        self.blobs: list[Blob] = []

    def text(self, value: str, name: str) -> str:
        if len(value) <= self.limit:
            return value
        blob = Blob(_blob_id(value), name, value)
        self.blobs.append(blob)
        return POINTER.format(name=name, size=len(value.encode("utf-8")), id=blob.id)

    def content(self, value: Any) -> str:
        if isinstance(value, str):
            return self.text(value, f"message-{self.index}")
        if not isinstance(value, list):
            raise ValidationError(
                f"message {self.index}: content must be text or a list of parts, "
                f"got {type(value).__name__}"
            )
        lines = []
        for p, part in enumerate(value):
            name = f"message-{self.index}-part-{p}"
            if isinstance(part, str):
                lines.append(self.text(part, name))
                continue
            if not isinstance(part, Mapping):
                raise ValidationError(f"message {self.index}: part {p} must be text or an object")
            label = part.get("name") or part.get("filename") or part.get("title")
            name = str(label)[:MAX_ID_CHARS] if label else name
            body = part.get("text", part.get("content"))
            if isinstance(body, str):
                lines.append(self.text(body, name))
            elif body is not None:
                lines.append(self.text(json.dumps(body, ensure_ascii=False), name))
        return "\n".join(lines)

    def results(self, value: Any) -> Any:
        """Tool results with every large text replaced by its pointer."""
        if isinstance(value, str):
            return self.text(value, f"tool-result-{self.index}")
        if isinstance(value, list):
            return [self.results(v) for v in value]
        if isinstance(value, Mapping):
            return {str(k): self.results(v) for k, v in value.items()}
        return value


def prepare(raw: Any, index: int, large_part_chars: int) -> Prepared:
    """One incoming message as a storable one; a ``ValidationError`` naming it otherwise."""
    if not isinstance(raw, Mapping):
        raise ValidationError(
            f"message {index} must be an object with 'role' and 'content', got {type(raw).__name__}"
        )
    role = raw.get("role")
    if not isinstance(role, str) or not role.strip() or len(role) > MAX_ROLE_CHARS:
        raise ValidationError(f"message {index} needs a 'role' (user, assistant, tool or a name)")
    if (
        raw.get("content") is None
        and raw.get("tool_calls") is None
        and raw.get("tool_results") is None
    ):
        raise ValidationError(f"message {index} needs 'content'")
    message_id = raw.get("id", raw.get("message_id"))
    if message_id is not None and (
        not isinstance(message_id, str | int)
        or not str(message_id)
        or len(str(message_id)) > MAX_ID_CHARS
    ):
        raise ValidationError(f"message {index}: 'id' must be a short string")
    when = check_time(f"messages[{index}].created_at", raw.get("created_at", raw.get("timestamp")))
    parts = _Parts(large_part_chars, index)
    content = parts.content(raw.get("content") or "")
    tool_calls = raw.get("tool_calls")
    results = raw.get("tool_results")
    if results is not None:
        results = parts.results(results)
    shown = content
    if tool_calls is not None:
        shown += "\n[tool calls] " + json.dumps(tool_calls, ensure_ascii=False)
    if results is not None:
        shown += "\n[tool results] " + json.dumps(results, ensure_ascii=False)
    digest = hashlib.sha256(
        "\x00".join(
            [role.strip(), content, json.dumps(tool_calls), json.dumps(results), str(to_us(when))]
        ).encode("utf-8")
    ).hexdigest()
    return Prepared(
        NewMessage(
            message_id=None if message_id is None else str(message_id),
            content_hash=digest,
            role=role.strip(),
            content=content,
            tokens=message_tokens(role.strip(), shown),
            created_at_us=to_us(when),
            tool_calls=tool_calls,
            tool_results=results,
        ),
        parts.blobs,
    )


def prepare_all(messages: Any, large_part_chars: int, most: int) -> list[Prepared]:
    if isinstance(messages, str | bytes) or not isinstance(messages, Sequence):
        raise ValidationError("messages must be a list of {role, content} objects")
    if not messages:
        raise ValidationError("messages is empty")
    if len(messages) > most:
        raise ValidationError(f"at most {most} messages per call, got {len(messages)}")
    return [prepare(m, i, large_part_chars) for i, m in enumerate(messages)]


def pointer_ids(text: str) -> list[str]:
    """The blob ids of the pointer lines in ``text``."""
    return POINTER_RE.findall(text)
