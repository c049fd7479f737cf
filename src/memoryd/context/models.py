"""What the context engine stores and returns: messages, summaries, context items, hits."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from memoryd.models import format_ts

ItemKind = Literal["message", "summary"]
SummaryKind = Literal["leaf", "condensed"]


@dataclass(frozen=True)
class StoredMessage:
    """One message of a conversation, as stored: verbatim, large parts as pointer lines."""

    rowid: int
    seq: int  # position in the conversation, from 0
    message_id: str | None
    role: str
    content: str
    tokens: int
    created_at: datetime | None
    tool_calls: Any = None
    tool_results: Any = None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "id": self.message_id or f"m{self.seq}",
            "seq": self.seq,
            "role": self.role,
            "content": self.content,
            "tokens": self.tokens,
            "created_at": format_ts(self.created_at) if self.created_at else None,
        }
        if self.tool_calls is not None:
            data["tool_calls"] = self.tool_calls
        if self.tool_results is not None:
            data["tool_results"] = self.tool_results
        return data


@dataclass(frozen=True)
class Summary:
    """A node of the DAG: a leaf over messages, or a condensed summary over summaries."""

    rowid: int
    id: str
    kind: SummaryKind
    depth: int
    content: str
    tokens: int
    source_tokens: int
    first_seq: int
    last_seq: int
    summariser: str
    created_at: datetime

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "depth": self.depth,
            "content": self.content,
            "tokens": self.tokens,
            "source_tokens": self.source_tokens,
            "first_seq": self.first_seq,
            "last_seq": self.last_seq,
            "summariser": self.summariser,
            "created_at": format_ts(self.created_at),
        }


@dataclass(frozen=True)
class Item:
    """One entry of a conversation's context: what currently stands for a stretch of it."""

    kind: ItemKind
    ref: int  # a message's or a summary's rowid


@dataclass
class Conversation:
    rowid: int
    tenant_id: str
    conversation_id: str
    agent_id: str | None
    title: str
    created_at: datetime
    updated_at: datetime

    def to_json(self) -> dict[str, Any]:
        return {
            "conversation_id": self.conversation_id,
            "agent_id": self.agent_id,
            "title": self.title,
            "created_at": format_ts(self.created_at),
            "updated_at": format_ts(self.updated_at),
        }


@dataclass(frozen=True)
class GrepHit:
    kind: ItemKind
    id: str  # a message id (``m<seq>`` when the host gave none) or a summary id
    seq: int  # the message's position, or the summary's first message
    role: str | None
    snippet: str
    exact: bool  # the query occurs verbatim

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "id": self.id,
            "seq": self.seq,
            "role": self.role,
            "snippet": self.snippet,
            "exact": self.exact,
        }


@dataclass
class IngestOutcome:
    """What an ingest did: messages stored now, and those already held (a resend)."""

    stored: list[StoredMessage] = field(default_factory=list)
    duplicates: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "stored": len(self.stored),
            "duplicates": self.duplicates,
            "message_ids": [m.message_id or f"m{m.seq}" for m in self.stored],
        }
