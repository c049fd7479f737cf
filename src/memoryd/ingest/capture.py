"""Conversation capture, the fast path (seed 000 §1.1): stored, searchable, queued at once.

Every message is stored verbatim in the session log and as a searchable
``session`` memory, and, for a smart ingest, the task that distils them is
queued in the same transaction: once this returns, nothing acknowledged can
be lost, and the slow path (:mod:`memoryd.ingest.smart`) has what it needs.

Two kinds of turn are treated apart:

* a repeat is not stored again. Within a session, the same role and words
  are stored once. A caller that sends no session id (ourmem's Stop hook,
  OpenClaw's ``before_reset``, MCP ``memory_ingest``) sends the last turns
  again on every call; without one, a turn whose role and words the space
  stored in the last ``REPEAT_WINDOW`` is a repeat too. (Two such requests
  at the same instant may both store a turn; search shows it once.)
* a tool's output (role ``tool``, ``toolResult`` …) is stored and marked,
  never embedded, and left out of search unless a search asks for it.

With ``defer_embedding`` (the REST door) the turns are answered for as soon
as they are durable and found by keywords; their vectors are queued in the
same transaction and computed right after (:mod:`memoryd.jobs.embed_queue`).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from memoryd.errors import ValidationError
from memoryd.jobs.worker import INGEST
from memoryd.models import IngestResult, Memory, Message, format_ts, utcnow
from memoryd.store.rows import to_us
from memoryd.store.sessions import RawMessage
from memoryd.text.conversation import (
    embedding_text,
    ingest_task_result,
    is_tool_role,
    link_context,
    parse_messages,
    turn_memory,
)
from memoryd.validate import check_tags

if TYPE_CHECKING:
    from memoryd.ingest.memories import TenantMemories

# how long a turn sent without a session id counts as a repeat of the same words
# stored before: longer than a working session, whose hooks resend the last turns
REPEAT_WINDOW = timedelta(hours=24)


def capture(
    mine: TenantMemories,
    messages: Sequence[Message | dict[str, Any]],
    *,
    session_id: str | None,
    agent_id: str | None,
    mode: str,
    dates: datetime | Sequence[datetime | None] | None,
    tags: Any,
    source: str | None,
    defer_embedding: bool = False,
) -> IngestResult:
    """Store ``messages`` for ``mine``'s tenant; a smart ``mode`` queues the slow path."""
    if mode not in ("raw", "smart"):
        raise ValidationError(f"unknown ingest mode: {mode} (expected raw or smart)")
    turns = parse_messages(messages, dates)
    tag_list = check_tags(tags)
    repeats: set[str] = set()
    if session_id is None and turns:
        since = to_us(utcnow() - REPEAT_WINDOW) or 0
        digests = [t.digest for t in turns]
        repeats = mine.store.recent_hashes(mine.tenant_id, mine.space_id, digests, since)
    session_id = session_id or str(uuid.uuid4())
    memories = [
        turn_memory(
            t,
            tenant_id=mine.tenant_id,
            space_id=mine.space_id,
            session_id=session_id,
            agent_id=agent_id,
            tags=tag_list,
            source=source,
        )
        for t in turns
    ]
    # every turn gives the next its context, a repeat too: what the new ones answer
    link_context(memories, mine.store.last_session_line(mine.tenant_id, mine.space_id, session_id))
    new = [(t, m) for t, m in zip(turns, memories, strict=True) if t.digest not in repeats]
    embed = [m for t, m in new if not is_tool_role(t.role)]
    vectors = {} if defer_embedding else _vectors(mine, embed)
    with mine.store.write() as conn:
        fresh = mine.store.add_session_messages(
            conn,
            mine.tenant_id,
            mine.space_id,
            session_id,
            agent_id,
            [RawMessage(t.role, t.content, t.digest, to_us(t.said_at), m.id) for t, m in new],
        )
        kept = [m for (_, m), stored in zip(new, fresh, strict=True) if stored]
        if kept:
            mine.store.insert_memories(
                kept, [vectors.get(m.id) for m in kept], actor=agent_id, conn=conn
            )
            if defer_embedding:
                ids = {m.id for m in embed}
                mine.store.queue_embeddings(conn, [m for m in kept if m.id in ids])
        task_id = str(uuid.uuid4())
        smart = mode == "smart" and bool(new)  # all repeats: nothing new to distil
        mine.store.record_task(
            conn,
            task_id,
            mine.tenant_id,
            mine.space_id,
            INGEST,
            "queued" if smart else "completed",
            ingest_task_result(mode, session_id, len(turns), len(kept)),
            payload={
                "messages": [
                    {"role": t.role, "content": t.content, "said_at": format_ts(t.said_at)}
                    for t in turns
                ],
                "session_id": session_id,
                "agent_id": agent_id,
                "tags": tag_list,
                "source": source,
            }
            if smart
            else None,
        )
    if defer_embedding and kept:
        mine.engine.embed_queue().notify()
    if smart:
        from memoryd.ingest.smart import start_smart_worker  # the slow path loads the LLM

        start_smart_worker(mine.engine).notify()
    return IngestResult(
        task_id=task_id,
        session_id=session_id,
        stored_count=len(kept),
        memory_ids=[m.id for m in kept],
    )


def _vectors(mine: TenantMemories, memories: Sequence[Memory]) -> dict[str, Any]:
    """The vectors of ``memories`` by id, computed now (before anything is written)."""
    if not memories:
        return {}
    vectors = mine.embed([embedding_text(m) for m in memories])
    return {m.id: v for m, v in zip(memories, vectors, strict=True)}
