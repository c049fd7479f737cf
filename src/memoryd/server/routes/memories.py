"""Memories: create (direct or conversation), list, search, read, change, delete (§4.3–4.11)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Header, Query

from memoryd.errors import PayloadTooLargeError, ValidationError
from memoryd.models import Category, MemoryType, State, wire
from memoryd.profile import build_profile
from memoryd.server.responses import (
    ERROR_RESPONSES,
    Deleted,
    History,
    IngestAccepted,
    MemoryOut,
    MemoryPage,
    Profile,
    SearchResults,
    Status,
    Task,
)
from memoryd.server.schemas import BatchDelete, MemoryCreate, MemoryUpdate, dump
from memoryd.store import MemoryFilter
from memoryd.validate import parse_enum
from memoryd.web.deps import AgentHeader, Caller, memory_json, ok
from memoryd.web.errors import CompactJSON

router = APIRouter(tags=["memories"], responses=ERROR_RESPONSES)
DELETE_ALL_CONFIRMATION = "delete-all"


@router.post(
    "/v1/memories",
    status_code=201,
    response_model=MemoryOut,
    responses={202: {"model": IngestAccepted, "description": "a conversation, accepted"}},
)
def create_memory(body: MemoryCreate, svc: Caller, x_agent_id: AgentHeader = None) -> CompactJSON:
    """A direct memory from ``content`` (201), or a conversation from ``messages`` (202).

    ``tags`` and ``source`` apply to both; ``agent_id`` comes from the body,
    else from the ``X-Agent-Id`` header. A conversation is answered as soon as
    its turns are durable (and found by their words); their vectors are
    computed after the answer, so a client's timeout never hides a stored write.
    """
    agent = body.agent_id or x_agent_id
    if body.messages is not None:
        if not body.messages:
            raise ValidationError("messages array is empty")
        most = svc.settings.max_ingest_messages
        if len(body.messages) > most:
            raise PayloadTooLargeError(
                f"{len(body.messages)} messages in one request; send at most {most} per "
                "request (several requests with the same session_id make one conversation)"
            )
        result = svc.ingest(
            [m.model_dump(exclude_none=True) for m in body.messages],
            session_id=body.session_id,
            agent_id=agent,
            mode=body.mode,
            tags=body.tags,
            source=body.source,
            defer_embedding=True,
        )
        return ok(
            {
                "task_id": result.task_id,
                "stored_count": result.stored_count,
                "session_id": result.session_id,
                "memory_ids": result.memory_ids,
                "status_url": f"/v1/tasks/{result.task_id}",
            },
            202,
        )
    if body.content is None:
        raise ValidationError("either 'messages' or 'content' required")
    fields = body.model_dump(
        exclude_none=True,
        exclude={"messages", "mode", "agent_id", "session_id", "entity_context", "content"},
    )
    memory = svc.add(body.content, agent_id=agent, session_id=body.session_id, **fields)
    return ok(memory_json(memory), 201)


@router.get("/v1/memories", response_model=MemoryPage)
def list_memories(
    svc: Caller,
    limit: int = 20,
    offset: int = 0,
    memory_type: str | None = None,
    state: str | None = None,
    category: str | None = None,
    tier: str | None = None,
    tags: str | None = None,
    sort: str = "created_at",
    order: str = "desc",
    scope: str | None = None,
    current: bool = False,
) -> CompactJSON:
    """Newest first by default; conversation turns only with ``memory_type=session``;
    ``current=true``: only what holds now (not superseded, ended or expired)."""
    rows, total = svc.list_memories(
        limit=limit,
        offset=offset,
        sort=sort,
        order="desc" if order == "desc" else "asc",
        memory_type=memory_type,
        state=state,
        category=category,
        tier=tier,
        tags=tags,
        scope=scope,
        current=current,
    )
    return ok(
        {
            "memories": [memory_json(m) for m in rows],
            "total_count": total,
            "limit": limit,
            "offset": offset,
        }
    )


@router.get("/v1/memories/search", response_model=SearchResults)
def search_memories(
    svc: Caller,
    q: str,
    limit: int = 20,
    min_score: float | None = None,
    min_similarity: float | None = None,
    include_trace: bool = False,
    space: str | None = None,
    check_stale: bool = False,
    scope: str | None = None,
    filter_tags: str | None = None,
    source: str | None = None,
    agent_id: str | None = None,
    category: str | None = None,
    memory_type: str | None = None,
    session_id: str | None = None,
    exclude_session: str | None = None,
    include_tool_output: bool = False,
    as_of: datetime | None = None,
) -> CompactJSON:
    """Hybrid search over every space of the caller (or ``space``), filters applied.

    ``tags`` is accepted and ignored, as the ourmem contract has it (§4.5):
    the OpenCode plugin sends its container tags on every search and relies
    on seeing the memories every other client wrote. memoryd's own tag filter
    is ``filter_tags`` (comma-separated; a memory must carry all of them).
    ``exclude_session`` leaves out the turns of the conversation being
    recalled for; tool output is found only with ``include_tool_output``.
    """
    if not q.strip():  # named as this door names it: the query parameter
        raise ValidationError("query parameter 'q' is required")
    response = svc.search(
        q,
        limit=limit,
        min_score=min_score,
        min_similarity=min_similarity,
        include_trace=include_trace,
        spaces=space,
        scope=scope,
        tags=filter_tags,
        source=source,
        agent_id=agent_id,
        category=category,
        memory_type=memory_type,
        session_id=session_id,
        exclude_session=exclude_session,
        include_tool_output=include_tool_output,
        as_of=as_of,
    )
    sharing = svc.sharing if check_stale else None
    results = []
    for r in response.results:
        item: dict[str, Any] = {
            "memory": memory_json(r.memory),
            "score": r.score,
            "similarity": r.similarity,
        }
        if sharing is not None and r.memory.provenance is not None:
            item["stale_info"] = sharing.stale_info(r.memory)
        results.append(item)
    out: dict[str, Any] = {"results": results}
    if response.trace is not None:
        out["trace"] = response.trace.model_dump()
    return ok(out)


@router.post("/v1/memories/batch-delete", response_model=Deleted)
def batch_delete(body: BatchDelete, svc: Caller) -> CompactJSON:
    """By ids, or by filter (a dry run count unless ``confirm``)."""
    f = None
    if body.filter is not None:
        given = body.filter
        f = MemoryFilter(
            source=given.source,
            tags=given.tags,
            category=_enum_list("category", given.category) or None,
            memory_type=_enum_list("memory_type", given.memory_type) or None,
            state=_enum_list("state", given.state) or None,
            created_before=given.before,
            exclude_types=(),
        )
    return ok(svc.batch_delete(ids=body.memory_ids, filter=f, confirm=body.confirm))


FILTER_ENUMS: dict[str, Any] = {"category": Category, "memory_type": MemoryType, "state": State}


def _enum_list(name: str, value: str | None) -> list[Any]:
    return [] if not value else [parse_enum(FILTER_ENUMS[name], value)]


@router.delete("/v1/memories/all", response_model=Deleted)
def delete_all(
    svc: Caller, x_confirm: Annotated[str | None, Header(alias="X-Confirm")] = None
) -> CompactJSON:
    """Soft-delete every personal memory; needs ``X-Confirm: delete-all``."""
    if x_confirm != DELETE_ALL_CONFIRMATION:
        raise ValidationError("send the header X-Confirm: delete-all to delete every memory")
    return ok(svc.delete_all(confirm=True))


@router.get("/v1/memories/{memory_id}", response_model=MemoryOut)
def get_memory(svc: Caller, memory_id: str, check_stale: bool = False) -> CompactJSON:
    memory = svc.get(memory_id)
    out = memory_json(memory)
    if check_stale and memory.provenance is not None:
        out["stale_info"] = svc.sharing.stale_info(memory)
    return ok(out)


@router.get("/v1/memories/{memory_id}/history", response_model=History)
def memory_history(svc: Caller, memory_id: str) -> CompactJSON:
    """Every recorded change of a memory, oldest first (a memoryd addition)."""
    full_id = svc.resolve_id(memory_id)
    return ok({"memory_id": full_id, "history": svc.history(full_id)})


@router.put("/v1/memories/{memory_id}", response_model=MemoryOut)
def update_memory(svc: Caller, memory_id: str, body: MemoryUpdate) -> CompactJSON:
    """Change fields; new ``content`` replaces ``l2_content`` too and is re-embedded."""
    return ok(memory_json(svc.update(memory_id, **(dump(body) or {}))))


@router.delete("/v1/memories/{memory_id}", response_model=Status)
def delete_memory(svc: Caller, memory_id: str) -> CompactJSON:
    svc.delete(memory_id)
    return ok({"status": "deleted"})


@router.post("/v1/memories/{memory_id}/noise", response_model=Status)
def mark_noise(svc: Caller, memory_id: str) -> CompactJSON:
    """Teach the noise filter: this memory is chatter (it is deleted; its vector is kept)."""
    svc.mark_noise(memory_id)
    return ok({"status": "marked_noise"})


@router.get("/v1/tasks/{task_id}", response_model=Task)
def task_status(svc: Caller, task_id: str) -> CompactJSON:
    """The status of a conversation-ingest task (its id came from ``POST /v1/memories``)."""
    return ok(wire(svc.task(task_id)))


@router.get("/v1/profile", response_model=Profile)
def profile(svc: Caller, q: Annotated[str | None, Query()] = None) -> CompactJSON:
    """Static facts, recent context, an optional search, and all of it as one string."""
    return ok(build_profile(svc, q))
