"""OmniRoute's memory API over memoryd's memories: its shapes and types, memoryd's store.

OmniRoute has four memory types; memoryd has six categories. The mapping
(documented in docs/proxy.md):

============  ====================================  =====================
OmniRoute     memoryd categories it reads           written as
============  ====================================  =====================
factual       profile, preferences, patterns        preferences
episodic      events                                events
procedural    cases                                 cases
semantic      entities                              entities
============  ====================================  =====================

Conversation turns (memoryd's ``session`` memories) are not OmniRoute
memories and are not listed here. A memory written with a ``key``
supersedes the one that held the key (OmniRoute's upsert; memoryd keeps
the old one in history). ``metadata`` is kept beside the memory.
"""

from __future__ import annotations

import logging
import math
import time
import uuid
from datetime import datetime
from typing import Any

from memoryd.errors import NotFoundError, ValidationError
from memoryd.models import Category, Memory, MemoryType, State, format_ts, utcnow
from memoryd.service import MAX_OFFSET, MemoryService
from memoryd.store import MemoryFilter
from memoryd.validate import check_time

log = logging.getLogger("memoryd.proxy")

TYPES: dict[str, tuple[Category, ...]] = {
    "factual": (Category.PROFILE, Category.PREFERENCES, Category.PATTERNS),
    "episodic": (Category.EVENTS,),
    "procedural": (Category.CASES,),
    "semantic": (Category.ENTITIES,),
}
TYPE_OF: dict[Category, str] = {c: t for t, cats in TYPES.items() for c in cats}
DEFAULT_LIMIT = 50
MAX_LIMIT = 1000


def category_of(memory_type: str | None) -> Category:
    """The category a memory of an OmniRoute type is written as."""
    if memory_type is None or memory_type == "":
        return Category.PREFERENCES
    if memory_type not in TYPES:
        raise ValidationError(
            f"unknown memory type: {memory_type} (expected one of {', '.join(TYPES)})"
        )
    return Category.PREFERENCES if memory_type == "factual" else TYPES[memory_type][0]


def entry(memory: Memory, metadata: dict[str, Any] | None = None) -> dict[str, Any]:
    """A memory in OmniRoute's shape."""
    return {
        "id": memory.id,
        "apiKeyId": memory.tenant_id,
        "sessionId": memory.session_id,
        "type": TYPE_OF.get(memory.category, "factual"),
        "key": memory.key,
        "content": memory.content,
        "metadata": metadata or {},
        "createdAt": format_ts(memory.created_at),
        "updatedAt": format_ts(memory.updated_at),
        "expiresAt": format_ts(memory.expires_at) if memory.expires_at else None,
    }


def _filter(
    memory_type: str | None, session_id: str | None, created_before: datetime | None = None
) -> MemoryFilter:
    return MemoryFilter(
        category=list(TYPES[memory_type]) if memory_type else None,
        session_id=session_id or None,
        state=[State.ACTIVE],
        live_at=utcnow(),
        created_before=created_before,
        exclude_types=(MemoryType.SESSION,),
    )


def list_entries(
    svc: MemoryService,
    *,
    memory_type: str | None = None,
    session_id: str | None = None,
    q: str | None = None,
    limit: int = DEFAULT_LIMIT,
    page: int = 1,
    offset: int | None = None,
) -> dict[str, Any]:
    """A page of memories (``offset`` over ``page`` when both are given), with the stats."""
    if memory_type:
        category_of(memory_type)  # an unknown type is an error, not an empty page
    if not 1 <= limit <= MAX_LIMIT:
        raise ValidationError(f"limit must be between 1 and {MAX_LIMIT}")
    if page < 1 or (offset is not None and offset < 0):
        raise ValidationError("page starts at 1 and offset at 0")
    start = offset if offset is not None else (page - 1) * limit
    if start > MAX_OFFSET:  # a number the store cannot hold is a bad request, not a 500
        raise ValidationError(f"page and offset reach at most {MAX_OFFSET} memories in")
    spaces = [svc.space_id]
    if q and q.strip():
        hits = svc.search(q, limit=MAX_LIMIT, session_id=session_id or None, touch=False)
        wanted = set(TYPES[memory_type]) if memory_type else None
        found = [
            h.memory
            for h in hits.results
            if h.memory.memory_type is not MemoryType.SESSION
            and h.memory.space_id == svc.space_id
            and (wanted is None or h.memory.category in wanted)
        ]
        rows, total = found[start : start + limit], len(found)
    else:
        rows, total = svc.store.list_memories(
            svc.tenant_id,
            spaces,
            svc.scoped(_filter(memory_type, session_id)),
            limit=limit,
            offset=start,
        )
    metadata = svc.store.memory_metadata(svc.tenant_id, [m.id for m in rows])
    by_type = {
        t: svc.store.count(svc.tenant_id, spaces, svc.scoped(_filter(t, None))) for t in TYPES
    }
    return {
        "data": [entry(m, metadata.get(m.id)) for m in rows],
        "total": total,
        "page": start // limit + 1,
        "limit": limit,
        "offset": start,
        "totalPages": max(1, math.ceil(total / limit)),
        "stats": {"total": sum(by_type.values()), "byType": by_type},
    }


def create_entry(svc: MemoryService, body: Any) -> dict[str, Any]:
    """OmniRoute's ``createMemory``: upsert by ``key``, metadata kept beside the memory."""
    if not isinstance(body, dict):
        raise ValidationError("the body must be a JSON object")
    unknown = set(body) - {"content", "key", "type", "sessionId", "metadata", "expiresAt"}
    if unknown:
        raise ValidationError(f"unknown fields: {', '.join(sorted(unknown))}")
    metadata = body.get("metadata")
    if metadata is not None and not isinstance(metadata, dict):
        raise ValidationError("metadata must be a JSON object")
    key = body.get("key")
    if key is not None and (not isinstance(key, str) or not key.strip()):
        raise ValidationError("key must be a non-empty string")
    content = body.get("content")
    if not isinstance(content, str):
        raise ValidationError("content is required (a string)")
    memory = svc.add(
        content,
        key=key,
        category=category_of(body.get("type")),
        session_id=body.get("sessionId"),
        expires_at=body.get("expiresAt"),
        source="api/memory",
    )
    if metadata:
        svc.store.put_memory_metadata(svc.tenant_id, memory.id, metadata)
    return entry(memory, metadata)


def get_entry(svc: MemoryService, memory_id: str) -> dict[str, Any]:
    memory = svc.get(memory_id)
    if memory.state is not State.ACTIVE:
        raise NotFoundError(f"memory {memory_id}")
    return entry(memory, svc.store.memory_metadata(svc.tenant_id, [memory.id]).get(memory.id))


def delete_entry(svc: MemoryService, memory_id: str) -> dict[str, Any]:
    memory = svc.get(memory_id)
    if memory.state is State.DELETED:
        raise NotFoundError(f"memory {memory_id}")
    svc.delete(memory.id)
    return {"success": True, "id": memory.id}


def health(svc: MemoryService) -> dict[str, Any]:
    """A real round trip: create a memory, find it in a list, delete it."""
    started = time.perf_counter()
    key = f"health-check:{uuid.uuid4().hex}"
    out: dict[str, Any] = {"working": False}
    memory = None
    try:
        memory = svc.add(  # a probe: never copied into a space that auto-shares
            f"memoryd health check {key}", key=key, source="api/memory/health", share=False
        )
        listed, _ = svc.store.list_memories(
            svc.tenant_id, [svc.space_id], MemoryFilter(key=key, state=[State.ACTIVE])
        )
        if [m.id for m in listed] != [memory.id]:
            raise RuntimeError("the memory just written is not listed")
        out["working"] = True
    except Exception as exc:  # the health answer reports the failure instead of raising it
        log.exception("the memory health check failed")
        out["error"] = str(exc)
    finally:
        if memory is not None:
            try:
                svc.delete(memory.id)
            except Exception as exc:
                out["working"] = False
                out["error"] = f"could not delete the health-check memory: {exc}"
    out["latencyMs"] = round((time.perf_counter() - started) * 1000, 2)
    return out


def clear_entries(
    svc: MemoryService,
    memory_type: str | None = None,
    older_than: datetime | str | None = None,
    everything: bool = False,
) -> dict[str, Any]:
    """OmniRoute's clear: the memories of a type, older than a time, or (``everything``) all.

    A soft delete, as everywhere in memoryd; conversation turns are not
    OmniRoute memories and stay. Clearing all needs saying so: an empty call
    clears nothing.
    """
    if memory_type:
        category_of(memory_type)
    elif older_than is None and not everything:
        raise ValidationError("name a type or olderThan, or send all: true to clear every memory")
    f = svc.scoped(_filter(memory_type, None, check_time("olderThan", older_than)))
    deleted = svc.store.set_state_where(svc.tenant_id, [svc.space_id], f, State.DELETED)
    return {"deleted": deleted}
