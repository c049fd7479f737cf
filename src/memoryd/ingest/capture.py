"""Conversation capture, the fast path (seed 000 §1.1): stored, searchable, queued at once.

Every message is stored verbatim in the session log and as a searchable
``session`` memory, and, for a smart ingest, the task that distils them is
queued in the same transaction: once this returns, nothing acknowledged can
be lost, and the slow path (:mod:`memoryd.ingest.smart`) has what it needs.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from memoryd.errors import ValidationError
from memoryd.ingest.conversation import (
    embedding_text,
    ingest_task_result,
    link_context,
    parse_messages,
    turn_memory,
)
from memoryd.ingest.direct import check_tags
from memoryd.ingest.worker import INGEST
from memoryd.models import IngestResult, Message, format_ts
from memoryd.store.rows import to_us
from memoryd.store.sessions import RawMessage

if TYPE_CHECKING:
    from memoryd.service import MemoryService


def capture(
    svc: MemoryService,
    messages: Sequence[Message | dict[str, Any]],
    *,
    session_id: str | None,
    agent_id: str | None,
    mode: str,
    dates: datetime | Sequence[datetime | None] | None,
    tags: Any,
    source: str | None,
) -> IngestResult:
    """Store ``messages`` for ``svc``'s tenant; a smart ``mode`` queues the slow path."""
    if mode not in ("raw", "smart"):
        raise ValidationError(f"unknown ingest mode: {mode} (expected raw or smart)")
    turns = parse_messages(messages, dates)
    session_id = session_id or str(uuid.uuid4())
    tag_list = check_tags(tags)
    memories = [
        turn_memory(
            t,
            tenant_id=svc.tenant_id,
            space_id=svc.space_id,
            session_id=session_id,
            agent_id=agent_id,
            tags=tag_list,
            source=source,
        )
        for t in turns
    ]
    link_context(memories, svc.store.last_session_line(svc.tenant_id, svc.space_id, session_id))
    vectors = svc.embed([embedding_text(m) for m in memories])
    with svc.store.write() as conn:
        fresh = svc.store.add_session_messages(
            conn,
            svc.tenant_id,
            svc.space_id,
            session_id,
            agent_id,
            [
                RawMessage(t.role, t.content, t.digest, to_us(t.said_at), m.id)
                for t, m in zip(turns, memories, strict=True)
            ],
        )
        keep = [i for i, new in enumerate(fresh) if new]
        if keep:
            svc.store.insert_memories(
                [memories[i] for i in keep],
                [vectors[i] for i in keep],
                actor=agent_id,
                conn=conn,
            )
        task_id = str(uuid.uuid4())
        smart = mode == "smart" and bool(turns)
        svc.store.record_task(
            conn,
            task_id,
            svc.tenant_id,
            svc.space_id,
            INGEST,
            "queued" if smart else "completed",
            ingest_task_result(mode, session_id, len(turns), len(keep)),
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
    if smart:
        svc.start_worker().notify()
    return IngestResult(
        task_id=task_id,
        session_id=session_id,
        stored_count=len(keep),
        memory_ids=[memories[i].id for i in keep],
    )
