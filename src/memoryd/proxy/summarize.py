"""Seed 002's ``summarizeMemories``, without its loss.

When a tenant's memories (of a session, or all) hold more tokens than a
budget, the newest that fit are kept as they are and each older one is
condensed to its first three sentences. OmniRoute overwrites the text; here
the condensed text is a new version of the memory, and the original stays
in its history (``GET /v1/memories/{id}/history``), so nothing is lost.
"""

from __future__ import annotations

import re
from typing import Any

from memoryd.errors import ValidationError
from memoryd.inject import estimate_tokens
from memoryd.models import MemoryType, State, utcnow
from memoryd.service import MemoryService
from memoryd.store import MemoryFilter

DEFAULT_BUDGET_TOKENS = 4000
MAX_BUDGET_TOKENS = 1_000_000
KEPT_SENTENCES = 3
PAGE = 500
_SENTENCE = re.compile(r"(?<=[.!?。！？])\s+")


def condense(text: str) -> str:
    """The first three sentences of ``text``."""
    return " ".join(_SENTENCE.split(text.strip())[:KEPT_SENTENCES])


def summarize(svc: MemoryService, session_id: Any = None, max_tokens: Any = None) -> dict[str, Any]:
    """Condense what is past the budget, newest first; returns the counts."""
    budget = DEFAULT_BUDGET_TOKENS if max_tokens is None else max_tokens
    if not isinstance(budget, int) or isinstance(budget, bool):
        raise ValidationError("maxTokens must be an integer")
    if not 0 <= budget <= MAX_BUDGET_TOKENS:
        raise ValidationError(f"maxTokens must be between 0 and {MAX_BUDGET_TOKENS}")
    if session_id is not None and not isinstance(session_id, str):
        raise ValidationError("sessionId must be a string")
    f = svc.scoped(
        MemoryFilter(
            session_id=session_id or None,
            state=[State.ACTIVE],
            live_at=utcnow(),
            exclude_types=(MemoryType.SESSION,),
        )
    )
    used = condensed = saved = 0
    offset = 0
    while True:
        rows, _ = svc.store.list_memories(
            svc.tenant_id, [svc.space_id], f, limit=PAGE, offset=offset
        )
        if not rows:
            break
        offset += len(rows)
        for memory in rows:
            tokens = estimate_tokens(memory.content)
            if used + tokens <= budget:
                used += tokens
                continue
            short = condense(memory.content)
            if len(short) >= len(memory.content):
                used += tokens  # nothing to condense: it stays as it is
                continue
            svc.update(memory.id, content=short)
            used += estimate_tokens(short)
            saved += tokens - estimate_tokens(short)
            condensed += 1
    return {"summarized": condensed, "tokensSaved": saved, "totalTokens": used}
