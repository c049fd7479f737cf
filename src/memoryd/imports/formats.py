"""What an uploaded file holds: text, or conversations to go through the conversation path.

Chat exports are recognised by shape, not by file name: ChatGPT's
``conversations.json`` (a list of conversations with a ``mapping`` tree),
Claude's (a list with ``chat_messages``), a plain ``[{role, content}]``
list, and JSON Lines of messages. Each becomes a conversation and is
distilled as one, so an exported chat and a live one end up the same way.
PDF text is read with pypdf. Anything that is neither valid UTF-8 text nor
a PDF is refused with a clear error instead of being stored as garbage.
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from memoryd.errors import ValidationError
from memoryd.extras import extra
from memoryd.imports.split import ANY_HEADING

PDF_MAGIC = b"%PDF-"
# a NUL byte this early means a binary file, whatever its bytes decode to
BINARY_PROBE_BYTES = 8192
CHAT_ROLES = {"user": "user", "human": "user", "assistant": "assistant", "ai": "assistant"}


class Format(StrEnum):
    TEXT = "text"
    MARKDOWN = "markdown"
    PDF = "pdf"
    CHATGPT = "chatgpt"
    CLAUDE = "claude"
    MESSAGES = "messages"
    JSONL = "jsonl"


@dataclass
class Conversation:
    title: str
    messages: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class Decoded:
    format: Format
    text: str
    conversations: list[Conversation] = field(default_factory=list)

    @property
    def is_chat(self) -> bool:
        return bool(self.conversations)


def decode(data: bytes, filename: str) -> Decoded:
    """The file's content by what it is; a ValidationError for binary or broken files."""
    if not data.strip():
        raise ValidationError(f"{filename} is empty")
    if data.startswith(PDF_MAGIC):
        return Decoded(Format.PDF, pdf_text(data, filename))
    if b"\x00" in data[:BINARY_PROBE_BYTES]:
        raise ValidationError(
            f"{filename} is a binary file; import takes text, Markdown, JSON, JSONL or PDF"
        )
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValidationError(
            f"{filename} is not valid UTF-8 (byte {exc.start}); convert it to UTF-8 first"
        ) from exc
    chat = chat_export(text)
    if chat is not None:
        return chat
    markdown = filename.lower().endswith((".md", ".markdown")) or ANY_HEADING.search(text)
    return Decoded(Format.MARKDOWN if markdown else Format.TEXT, text)


def pdf_text(data: bytes, filename: str) -> str:
    with extra("pdf", "importing a PDF file"):
        from pypdf import PdfReader
        from pypdf.errors import PdfReadError

    try:
        reader = PdfReader(io.BytesIO(data))
        pages = [page.extract_text() or "" for page in reader.pages]
    except (PdfReadError, ValueError, KeyError, TypeError) as exc:
        raise ValidationError(f"{filename} is not a readable PDF: {exc}") from exc
    text = "\n\n".join(p.strip() for p in pages if p.strip())
    if not text:
        raise ValidationError(f"{filename} has no text layer (scanned PDFs need OCR first)")
    return text


def chat_export(text: str) -> Decoded | None:
    """Conversations, when the text is one of the chat shapes; None for anything else."""
    stripped = text.lstrip()
    if stripped[:1] in ("[", "{"):
        try:
            data = json.loads(text)
        except json.JSONDecodeError:
            data = None
        if data is not None:
            return _from_json(data)
    return _from_jsonl(text)


def _from_json(data: Any) -> Decoded | None:
    if isinstance(data, dict) and isinstance(data.get("messages"), list):
        data = data["messages"]
    if not isinstance(data, list) or not data or not all(isinstance(d, dict) for d in data):
        return None
    if all("mapping" in d for d in data):
        found = [chatgpt_conversation(d) for d in data]
        return _decoded(Format.CHATGPT, found)
    if all("chat_messages" in d for d in data):
        return _decoded(Format.CLAUDE, [claude_conversation(d) for d in data])
    messages = [_message(d) for d in data]
    if all(m is not None for m in messages):
        return _decoded(Format.MESSAGES, [Conversation("", [m for m in messages if m])])
    return None


def _from_jsonl(text: str) -> Decoded | None:
    lines = [line for line in text.splitlines() if line.strip()]
    if len(lines) < 2 or not lines[0].lstrip().startswith("{"):
        return None
    try:
        rows = [json.loads(line) for line in lines]
    except json.JSONDecodeError:
        return None
    if not all(isinstance(r, dict) for r in rows):
        return None
    if all(isinstance(r.get("messages"), list) for r in rows):
        conversations = [
            Conversation(str(r.get("title") or ""), [m for m in map(_message, r["messages"]) if m])
            for r in rows
        ]
        return _decoded(Format.JSONL, conversations)
    messages = [_message(r) for r in rows]
    if all(m is not None for m in messages):
        return _decoded(Format.JSONL, [Conversation("", [m for m in messages if m])])
    return None


def _decoded(fmt: Format, conversations: list[Conversation]) -> Decoded | None:
    kept = [c for c in conversations if c.messages]
    if not kept:
        return None
    text = "\n\n".join("\n".join(f"{m['role']}: {m['content']}" for m in c.messages) for c in kept)
    return Decoded(fmt, text, kept)


def _text_of(content: Any) -> str:
    """A message's text: a string, or the text parts of a list of parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict) and isinstance(part.get("text"), str):
                parts.append(part["text"])
        return "\n".join(p for p in parts if p.strip())
    return ""


def _message(raw: Any) -> dict[str, Any] | None:
    """``{role, content}`` (any part list flattened); None when the item is not a message."""
    if not isinstance(raw, dict) or not isinstance(raw.get("role"), str) or "content" not in raw:
        return None
    text = _text_of(raw["content"])
    if not text.strip():
        return {}  # a message without text (an image, a tool call): skipped, not a mismatch
    message: dict[str, Any] = {"role": raw["role"], "content": text}
    if isinstance(raw.get("created_at"), str):
        message["created_at"] = raw["created_at"]
    return message


def chatgpt_conversation(raw: dict[str, Any]) -> Conversation:
    """The current branch of a ChatGPT conversation tree, oldest message first."""
    mapping: dict[str, Any] = raw.get("mapping") or {}
    node_id = raw.get("current_node")
    chain: list[dict[str, Any]] = []
    if node_id in mapping:
        seen: set[str] = set()
        while node_id in mapping and node_id not in seen:
            seen.add(node_id)
            chain.append(mapping[node_id])
            node_id = mapping[node_id].get("parent")
        chain.reverse()
    else:
        chain = sorted(
            mapping.values(), key=lambda n: (n.get("message") or {}).get("create_time") or 0
        )
    messages = []
    # when each message was said: its own create_time, else the conversation's (epoch seconds)
    said_at = _epoch_iso(raw.get("create_time"))
    for node in chain:
        message = node.get("message") or {}
        role = CHAT_ROLES.get(str((message.get("author") or {}).get("role", "")))
        text = _text_of((message.get("content") or {}).get("parts"))
        said_at = _epoch_iso(message.get("create_time")) or said_at
        if role and text.strip():
            out: dict[str, Any] = {"role": role, "content": text}
            if said_at:
                out["created_at"] = said_at
            messages.append(out)
    return Conversation(str(raw.get("title") or ""), messages)


def _epoch_iso(value: Any) -> str | None:
    """An export's epoch seconds as an ISO time; None for anything that is not one."""
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        return None
    try:
        return datetime.fromtimestamp(value, UTC).isoformat()
    except (OverflowError, OSError, ValueError):
        return None


def claude_conversation(raw: dict[str, Any]) -> Conversation:
    messages = []
    for item in raw.get("chat_messages") or []:
        if not isinstance(item, dict):
            continue
        role = CHAT_ROLES.get(str(item.get("sender", "")))
        text = item.get("text") if isinstance(item.get("text"), str) else ""
        text = text or _text_of(item.get("content"))
        if role and text.strip():
            message: dict[str, Any] = {"role": role, "content": text}
            if isinstance(item.get("created_at"), str):
                message["created_at"] = item["created_at"]
            messages.append(message)
    return Conversation(str(raw.get("name") or ""), messages)
