"""Conversation capture, fast path (seed 000 §1.1): durable and searchable at once.

Each message is stored verbatim in the session store (deduplicated per
session by a hash of role and content; a user's message without the quote
marks a host wrapped it in, see ``unquoted``) and becomes a ``session`` memory
that search returns like any other. Verbatim turns are the strongest recall
baseline there is; distillation into facts happens later, on top of them.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pydantic import ValidationError as PydanticValidationError

from memoryd.errors import ValidationError
from memoryd.models import (
    TOOL_OUTPUT_MARK,
    Category,
    Memory,
    MemoryType,
    Message,
    Tier,
    to_utc,
    utcnow,
)
from memoryd.privacy import redact
from memoryd.text.noise import says_nothing
from memoryd.text.rule_tables import USER_ROLES
from memoryd.validate import MAX_CONTENT_CHARS, check_time

MAX_MESSAGES = 10_000
CONTEXT_CHARS = 200
# a turn's importance: what the ranking weighs it by. A turn that carries nothing
# ("Big change!", "杭州很美！", "thanks") is kept, and weighs nothing: it ranks last
TURN_IMPORTANCE = 0.5
CONTENTLESS_IMPORTANCE = 0.0
# roles that name a part in the exchange, not a person
GENERIC_ROLES = frozenset(("user", "assistant", "system", "tool", "human", "ai", "developer"))
SESSION_SOURCE = "conversation"
# a message a host passed on as one quoted shell word: OpenCode sends `opencode run "I moved
# to Lyon."` to the model, and to its plugins, as "I moved to Lyon." (an inner " as \")
SHELL_QUOTED = re.compile(r'"((?:[^"\\]|\\"|\\(?!"))*)"', re.DOTALL)
# roles of a tool's output (OpenAI "tool", OpenClaw "toolResult", Anthropic "tool_result",
# the older "function"): kept verbatim, never embedded, left out of search unless asked
TOOL_ROLES = frozenset(("tool", "toolresult", "tool_result", "tool-result", "function", "ipython"))


def is_tool_role(role: str) -> bool:
    """A turn that is a tool's output, not something a person or the assistant said.

    A restaurant search result mentions food and allergies more often than the
    user ever does; ranked with what the user said, it would answer "what is
    my partner allergic to" before the user's own words.
    """
    return role.strip().lower() in TOOL_ROLES


def unquoted(text: str) -> str:
    """The message without the quote marks a host wrapped it in whole, as a shell quotes one
    word (``"…"``, each inner ``"`` written ``\\"``); any other text as it is.

    The quote marks are the host's, not the user's: kept, they would open the turn
    stored, the events recall shows and the facts distilled from it. A message with a
    bare inner quote mark (``"Dune" is my favourite book, not "Emma"``) is the user's
    own quoting and stays whole. (``rules.strip_lead_in`` takes any quote marks off
    the ends of each sentence it reads; this takes off only a host's wrapping, once.)
    """
    whole = SHELL_QUOTED.fullmatch(text.strip())
    if whole is None or not whole[1].strip():
        return text
    return whole[1].replace('\\"', '"')


@dataclass
class Turn:
    role: str
    content: str
    said_at: datetime | None
    digest: str


def message_hash(role: str, content: str) -> str:
    return hashlib.sha256(f"{role}\x00{content}".encode()).hexdigest()


def date_header(when: datetime | None, role: str) -> str:
    """``[2024-05-20 Mon 14:02] user``: full-text indexed, so dates and speakers match."""
    if when is None:
        return role
    return f"[{to_utc(when):%Y-%m-%d %a %H:%M}] {role}"


def transcript_line(role: str, content: str) -> str:
    """A turn as a transcript line, ``speaker: text``.

    Who said it is part of what was said: "I moved to Berlin" means something
    else from the user than from the assistant, and a question that names a
    speaker ("when did Caroline …") can only match the turn, by keywords or
    by meaning, if the name is in the text that is indexed and embedded.
    """
    return f"{role}: {content}"


def embedding_text(memory: Memory) -> str:
    """The text a memory's vector is computed from.

    A conversation turn is embedded with the turn before it: "yes, twice a
    week" means nothing alone. The turn comes first, so a long preceding turn
    is what the model's token limit cuts, never the turn itself. The context
    is kept in ``l1_overview`` so re-embedding (reindex, import) gives the
    same vector.
    """
    if memory.memory_type is not MemoryType.SESSION:
        return memory.content
    text = spoken(memory.content)
    return f"{text}\n{spoken(memory.l1_overview)}" if memory.l1_overview else text


def spoken(line: str) -> str:
    """A transcript line without a generic role: what was said, for the embedder.

    A named speaker stays ("Caroline: …" is about Caroline), but "user: " or
    "assistant: " in every vector would make any query that mentions "the
    user" lean towards short user turns over the facts it asks about.
    """
    role, sep, text = line.partition(": ")
    return text if sep and role.strip().lower() in GENERIC_ROLES else line


def spoken_by_user(turn: Memory) -> bool:
    """A conversation turn the user said (its transcript line names the user's role)."""
    role = turn.content.partition(": ")[0].strip().lower()
    return role in USER_ROLES


def context_of(line: str | None) -> str:
    """The start of the previous line: enough to say what a turn answers.

    Capped at ``CONTEXT_CHARS`` (on a word boundary) so the turn itself
    dominates its vector and ingest embeds little more than the turn.
    """
    if not line:
        return ""
    if len(line) <= CONTEXT_CHARS:
        return line
    cut = line[:CONTEXT_CHARS]
    return (cut.rsplit(" ", 1)[0] if " " in cut else cut) + " …"


def link_context(memories: Sequence[Memory], previous: str | None) -> None:
    """Give each turn the start of the line before it (``previous`` precedes the first)."""
    for memory in memories:
        memory.l1_overview = context_of(previous)
        previous = memory.content


def parse_messages(
    messages: Sequence[Message | dict[str, Any]],
    dates: datetime | Sequence[datetime | None] | None = None,
) -> list[Turn]:
    """Validated turns with their dates; private blocks redacted, fully private ones dropped."""
    if isinstance(messages, str | bytes) or not isinstance(messages, Sequence):
        raise ValidationError(
            "messages must be a list of {'role': ..., 'content': ...} messages, "
            f"got {type(messages).__name__}"
        )
    if not messages:
        raise ValidationError("messages array is empty")
    if len(messages) > MAX_MESSAGES:
        raise ValidationError(f"at most {MAX_MESSAGES} messages per call")
    if isinstance(dates, Sequence) and not isinstance(dates, str):
        if len(dates) != len(messages):
            raise ValidationError(f"{len(dates)} dates for {len(messages)} messages")
        when_each = [check_time(f"dates[{i}]", d) for i, d in enumerate(dates)]
    else:
        when_each = [check_time("dates", dates)] * len(messages)
    turns = []
    for i, raw in enumerate(messages):
        message = check_message(i, raw)
        when = message.created_at or when_each[i]
        role = message.role.strip()
        said = unquoted(message.content) if role.lower() in USER_ROLES else message.content
        content = redact(said)
        if content is None or not content.strip():
            continue
        turns.append(
            Turn(
                role=role,
                content=content,
                said_at=when and to_utc(when),
                digest=message_hash(role, content),
            )
        )
    return turns


def check_message(i: int, raw: Any) -> Message:
    """Message ``i`` of a call: a ``Message`` or a dict with string role and content."""
    if isinstance(raw, dict):
        if not isinstance(raw.get("role"), str) or not isinstance(raw.get("content"), str):
            raise ValidationError(f"message {i} needs string 'role' and 'content'")
        try:
            message = Message.model_validate(raw)
        except (PydanticValidationError, ValueError) as exc:
            raise ValidationError(f"message {i}: {exc}") from None
    elif isinstance(raw, Message):
        message = raw
    else:
        raise ValidationError(
            f"message {i} must be a dict with 'role' and 'content', got {type(raw).__name__}"
        )
    if len(message.content) > MAX_CONTENT_CHARS:
        raise ValidationError(
            f"message {i} is {len(message.content)} characters; the limit is {MAX_CONTENT_CHARS}"
        )
    if not message.role.strip():
        raise ValidationError(f"message {i} has an empty role (user, assistant or a name)")
    return message


def turn_memory(
    turn: Turn,
    *,
    tenant_id: str,
    space_id: str,
    session_id: str,
    agent_id: str | None,
    tags: list[str],
    source: str | None,
) -> Memory:
    now = utcnow()
    line = transcript_line(turn.role, turn.content)
    nothing = says_nothing(turn.role, turn.content)
    return Memory(
        content=line,
        l0_abstract=date_header(turn.said_at, turn.role),
        l2_content=line,
        category=Category.EVENTS,
        memory_type=MemoryType.SESSION,
        tier=Tier.PERIPHERAL,
        importance=CONTENTLESS_IMPORTANCE if nothing else TURN_IMPORTANCE,
        tags=tags,
        marks=[TOOL_OUTPUT_MARK] if is_tool_role(turn.role) else [],
        source=source or SESSION_SOURCE,
        agent_id=agent_id,
        owner_agent_id=agent_id or "",
        session_id=session_id,
        tenant_id=tenant_id,
        space_id=space_id,
        valid_from=turn.said_at,
        created_at=now,
        updated_at=now,
    )


def ingest_task_result(mode: str, session_id: str, received: int, stored: int) -> dict[str, Any]:
    """What a conversation-ingest task reports before its slow path runs."""
    return {
        "mode": mode,
        "session_id": session_id,
        "messages_received": received,
        "stored_count": stored,
    }
