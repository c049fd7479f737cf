"""Checkpoints: save an agent session's state, list them, and the restore block for a new one.

A thin door over ``memoryd.continuity.Continuity``: the caller's tenant
owns the checkpoints; the agent is the body's (or query's) ``agent_id``,
else the ``X-Agent-Id`` header.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Annotated, Any

from fastapi import APIRouter, BackgroundTasks, Query
from pydantic import Field

from memoryd.continuity import Continuity, Owner
from memoryd.continuity.config import ContinuityConfig
from memoryd.continuity.service import dump
from memoryd.errors import ValidationError
from memoryd.server.responses import ERROR_RESPONSES, Object
from memoryd.server.schemas import Body
from memoryd.web.deps import AgentHeader, Caller, ok
from memoryd.web.errors import CompactJSON

router = APIRouter(tags=["checkpoints"], responses=ERROR_RESPONSES)
MIN_RESTORE_CHARS = 200  # room for the fence and the first lines


class Limits(Body):
    """A host's own checkpoint limits (seed 004's ``maxMsgChars`` …), over the configured ones."""

    max_msg_chars: Annotated[int, Field(ge=1)] | None = None
    max_recent_msgs: Annotated[int, Field(ge=1)] | None = None
    max_recent_tools: Annotated[int, Field(ge=0)] | None = None
    max_modified_files: Annotated[int, Field(ge=0)] | None = None


class CheckpointSave(Body):
    agent_id: str | None = None
    session_id: str
    project: str = ""
    trigger: str = "manual"
    events: list[dict[str, Any]]
    summarize: bool = True  # ask the configured LLM (if any) before answering
    limits: Limits | None = None


def _agent(given: str | None, header: str | None) -> str:
    agent = given or header
    if not agent:
        raise ValidationError("agent_id is required (in the body or query, or X-Agent-Id)")
    return agent


@router.post("/v1/checkpoints", status_code=201, response_model=Object)
def save_checkpoint(
    body: CheckpointSave, svc: Caller, x_agent_id: AgentHeader = None
) -> CompactJSON:
    """Fold the events into the session's checkpoint; the previous one stays until it is saved."""
    owner = Owner(_agent(body.agent_id, x_agent_id), body.session_id, body.project)
    config = ContinuityConfig.from_settings(svc.settings)
    if body.limits is not None:
        config = replace(config, **body.limits.model_dump(exclude_none=True))
    checkpoint = Continuity(svc, config=config).save(
        owner, body.events, trigger=body.trigger, summarize_now=body.summarize
    )
    return ok(dump(checkpoint), 201)


@router.get("/v1/checkpoints", response_model=Object)
def list_checkpoints(
    svc: Caller,
    x_agent_id: AgentHeader = None,
    agent_id: str | None = None,
    session_id: str | None = None,
    project: str | None = None,
    limit: Annotated[int, Query()] = 20,
    offset: Annotated[int, Query()] = 0,
) -> CompactJSON:
    found = Continuity(svc, llm=None).list(
        agent_id=agent_id or x_agent_id,
        session_id=session_id,
        project=project,
        limit=limit,
        offset=offset,
    )
    return ok({"checkpoints": [dump(c) for c in found]})


@router.get("/v1/checkpoints/restore", response_model=Object)
def restore(
    svc: Caller,
    x_agent_id: AgentHeader = None,
    agent_id: str | None = None,
    project: str | None = None,
    max_chars: int | None = None,
) -> CompactJSON:
    """The fenced restore block of the agent's newest checkpoint in ``project`` (``""``: none).

    ``max_chars`` is the host's own cap for it (a plugin's ``maxPrependChars``),
    instead of the configured ``checkpoint_max_prepend_chars``.
    """
    if max_chars is not None and max_chars < MIN_RESTORE_CHARS:
        raise ValidationError(f"max_chars must be at least {MIN_RESTORE_CHARS}")
    continuity = Continuity(svc, llm=None)
    latest = continuity.latest(_agent(agent_id, x_agent_id), project)
    text = "" if latest is None else continuity.render(latest, max_chars=max_chars)
    return ok({"text": text, "checkpoint_id": None if latest is None else latest.id})


@router.get("/v1/checkpoints/{checkpoint_id}", response_model=Object)
def get_checkpoint(svc: Caller, checkpoint_id: str) -> CompactJSON:
    continuity = Continuity(svc, llm=None)
    checkpoint = continuity.get(checkpoint_id)
    return ok({**dump(checkpoint), "rendered": continuity.render(checkpoint)})


@router.post("/v1/checkpoints/{checkpoint_id}/summarize", response_model=Object)
def summarize(
    svc: Caller, checkpoint_id: str, background: BackgroundTasks, wait: bool = True
) -> CompactJSON:
    """The configured LLM's summary of the checkpoint (unchanged when no LLM is set).

    ``wait=false`` answers 202 at once and asks the LLM after the answer:
    a hook must not wait for a model.
    """
    continuity = Continuity(svc)
    checkpoint = continuity.get(checkpoint_id)
    if wait:
        return ok(dump(continuity.summarize(checkpoint.id)))
    background.add_task(continuity.summarize, checkpoint.id)
    return ok(dump(checkpoint), 202)


@router.delete("/v1/checkpoints/{checkpoint_id}", response_model=Object)
def delete_checkpoint(svc: Caller, checkpoint_id: str) -> CompactJSON:
    Continuity(svc, llm=None).delete(checkpoint_id)
    return ok({"deleted": checkpoint_id})
