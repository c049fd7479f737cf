"""Checkpoints over one tenant's ``MemoryService``: save, look up, restore.

Saving is two steps, each one write transaction: the mechanical checkpoint
(with the rule-derived summary when no LLM is configured) first, so the
work is safe before any model is asked; then, when an LLM is configured and
the caller asked for it, the model's summary attached to that row. A model
that fails or hangs costs the summary only, and a process killed at any
point leaves either the previous checkpoint or the new one, never a mix.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from datetime import datetime
from functools import cached_property
from typing import TYPE_CHECKING, Any

from memoryd.continuity.config import ContinuityConfig
from memoryd.continuity.layers import SessionLayers
from memoryd.continuity.mechanical import Event, Message, ToolResult, ToolUse, build, redacted
from memoryd.continuity.model import Checkpoint, Mechanical, Owner, Summary, Trigger
from memoryd.continuity.render import render
from memoryd.continuity.summary import derive, summarize
from memoryd.errors import ForbiddenError, MemorydError, NotFoundError, ValidationError
from memoryd.models import new_id
from memoryd.validate import check_int

if TYPE_CHECKING:
    from memoryd.llm import LLMClient
    from memoryd.service import MemoryService

log = logging.getLogger(__name__)

MAX_NAME_CHARS = 200
MAX_PROJECT_CHARS = 4096
MAX_EVENTS = 10_000
MAX_LIST = 1000


def check_name(what: str, value: Any) -> str:
    """An agent or session id: a non-empty string without line breaks, at most 200 characters."""
    if not isinstance(value, str) or not value.strip():
        raise ValidationError(f"{what} must be a non-empty string")
    if len(value) > MAX_NAME_CHARS or any(ch in value for ch in "\r\n\x00"):
        raise ValidationError(f"invalid {what}: {value[:50]!r}")
    return value.strip()


def check_project(value: Any) -> str:
    if value is None:
        return ""
    if not isinstance(value, str) or len(value) > MAX_PROJECT_CHARS or "\x00" in value:
        raise ValidationError("project must be a path-like string of at most 4096 characters")
    return value.strip()


def parse_events(items: Any) -> list[Event]:
    """Events from plain data: ``{"role", "content"}`` messages and ``{"tool", "arguments",
    "success"}`` tool calls (``name`` for ``tool`` and ``input`` for ``arguments`` too)."""
    if not isinstance(items, Sequence) or isinstance(items, str | bytes):
        raise ValidationError("events must be a list of messages and tool calls")
    if len(items) > MAX_EVENTS:
        raise ValidationError(f"at most {MAX_EVENTS} events in one save")
    events: list[Event] = []
    for i, item in enumerate(items):
        if isinstance(item, Message | ToolUse | ToolResult):
            events.append(item)
            continue
        if not isinstance(item, Mapping):
            raise ValidationError(f"events[{i}] must be an object")
        if "role" in item:
            role, content = item.get("role"), item.get("content")
            if role not in ("user", "assistant") or not isinstance(content, str):
                raise ValidationError(
                    f"events[{i}]: a message needs role 'user' or 'assistant' and string content"
                )
            events.append(Message(str(role), content))
            continue
        if "result_of" in item:
            if not isinstance(item.get("success"), bool):
                raise ValidationError(f"events[{i}]: a tool result needs success true or false")
            events.append(ToolResult(str(item["result_of"]), bool(item["success"])))
            continue
        name = item.get("tool", item.get("name"))
        arguments = item.get("arguments", item.get("input", {}))
        success = item.get("success")
        if not isinstance(name, str) or not name.strip() or not isinstance(arguments, Mapping):
            raise ValidationError(
                f"events[{i}]: give a message (role, content) or a tool call (tool, arguments)"
            )
        if success is not None and not isinstance(success, bool):
            raise ValidationError(f"events[{i}].success must be true, false or null")
        call_id = item.get("id")
        call_id = str(call_id) if call_id else new_id()  # unnamed calls are all distinct
        events.append(ToolUse(name, dict(arguments), call_id))
        if success is not None:
            events.append(ToolResult(call_id, success))
    return events


def to_checkpoint(row: Mapping[str, Any]) -> Checkpoint:
    summary = row["summary"]
    return Checkpoint(
        id=row["id"],
        agent_id=row["agent_id"],
        session_id=row["session_id"],
        project=row["project"],
        trigger=Trigger(row["trigger"]),
        saves=row["saves"],
        mechanical=Mechanical.model_validate_json(row["mechanical"]),
        summary=None if summary is None else Summary.model_validate_json(summary),
        created_at=row["created_at"],
        updated_at=row["updated_at"],
    )


class Continuity:
    """Checkpoints of one tenant's agents."""

    def __init__(
        self,
        service: MemoryService,
        *,
        config: ContinuityConfig | None = None,
        llm: LLMClient | bool | None = True,
    ) -> None:
        """``llm`` True: the configured one (if any); None or False: none; or a client."""
        self.service = service
        self.config = config or ContinuityConfig.from_settings(service.settings)
        self._llm_choice = llm

    @cached_property
    def llm(self) -> LLMClient | None:
        if self._llm_choice is True:
            from memoryd.llm import create_llm

            return create_llm(self.service.settings)
        if self._llm_choice is False or self._llm_choice is None:
            return None
        return self._llm_choice

    @property
    def _tenant(self) -> str:
        return self.service.tenant_id

    def _agent(self, agent_id: str | None) -> str | None:
        """The agent a call is about: an agent's view (``service.viewer``) has only its own
        checkpoints, as it has only its own agent scope."""
        viewer = self.service.viewer
        if viewer is None:
            return agent_id
        if agent_id is not None and agent_id != viewer.agent_id:
            raise ForbiddenError(
                f"agent {viewer.agent_id} cannot use agent {agent_id}'s checkpoints"
            )
        return viewer.agent_id

    # ------------------------------------------------------------------ saving
    def save(
        self,
        owner: Owner,
        events: Sequence[Event] | Sequence[Mapping[str, Any]],
        *,
        trigger: Trigger | str = Trigger.MANUAL,
        summarize_now: bool = True,
    ) -> Checkpoint:
        """Fold ``events`` into the session's checkpoint and save it (see the module doc)."""
        agent = check_name("agent_id", self._agent(owner.agent_id))
        session = check_name("session_id", owner.session_id)
        project = check_project(owner.project)
        try:
            why = Trigger(trigger)
        except ValueError:
            raise ValidationError(
                f"unknown trigger {trigger!r}; one of {', '.join(t.value for t in Trigger)}"
            ) from None
        parsed = redacted(parse_events(events))
        previous = self.session_checkpoint(agent, session)
        mechanical = build(parsed, self.config, previous.mechanical if previous else None)
        offline = self.llm is None
        derived = derive(mechanical) if offline else None
        if derived is not None:
            derived.basis = (previous.saves + 1) if previous else 1
        row = self.service.store.save_checkpoint(
            self._tenant,
            agent,
            session,
            project,
            why.value,
            mechanical.model_dump_json(),
            None if derived is None else derived.model_dump_json(),
        )
        checkpoint = to_checkpoint(row)
        # the session's raw transcript (D6) and exchange summary (D5) grow with it
        SessionLayers(self.service, llm=None).record(Owner(agent, session, project), parsed)
        if self.llm is not None and summarize_now:
            checkpoint = self._summarize(checkpoint)
        return checkpoint

    def summarize(self, checkpoint_id: str) -> Checkpoint:
        """Ask the configured LLM for the checkpoint's summary; as it was when there is none."""
        checkpoint = self.get(checkpoint_id)
        return checkpoint if self.llm is None else self._summarize(checkpoint)

    def _summarize(self, checkpoint: Checkpoint) -> Checkpoint:
        assert self.llm is not None
        try:
            summary = summarize(self.llm, checkpoint.mechanical, checkpoint.summary)
        except MemorydError as exc:  # LLMError among them
            log.warning("checkpoint %s: no summary from the LLM: %s", checkpoint.id, exc.message)
            return checkpoint
        summary.basis = checkpoint.saves
        if not self.service.store.set_checkpoint_summary(
            self._tenant, checkpoint.id, summary.model_dump_json(), checkpoint.saves
        ):
            log.info("checkpoint %s: a later summary is already saved", checkpoint.id)
            return self.get(checkpoint.id)
        return checkpoint.model_copy(update={"summary": summary})

    # ------------------------------------------------------------------ reading
    def session_checkpoint(self, agent_id: str, session_id: str) -> Checkpoint | None:
        rows = self.service.store.list_checkpoints(
            self._tenant, agent_id=agent_id, session_id=session_id, limit=1
        )
        return to_checkpoint(rows[0]) if rows else None

    def get(self, checkpoint_id: str) -> Checkpoint:
        if not isinstance(checkpoint_id, str) or not checkpoint_id.strip():
            raise ValidationError("checkpoint id must be a non-empty string")
        row = self.service.store.get_checkpoint(self._tenant, checkpoint_id.strip())
        viewer = self.service.viewer
        if row is None or (viewer is not None and row["agent_id"] != viewer.agent_id):
            raise NotFoundError(f"checkpoint {checkpoint_id}")
        return to_checkpoint(row)

    def list(
        self,
        *,
        agent_id: str | None = None,
        session_id: str | None = None,
        project: str | None = None,
        limit: int = 20,
        offset: int = 0,
    ) -> list[Checkpoint]:
        agent_id = self._agent(agent_id)
        rows = self.service.store.list_checkpoints(
            self._tenant,
            agent_id=None if agent_id is None else check_name("agent_id", agent_id),
            session_id=None if session_id is None else check_name("session_id", session_id),
            project=None if project is None else check_project(project),
            limit=check_int("limit", limit, 1, MAX_LIST),
            offset=check_int("offset", offset, 0, 10**9),
        )
        return [to_checkpoint(r) for r in rows]

    def latest(self, agent_id: str, project: str | None = None) -> Checkpoint | None:
        """The agent's newest checkpoint in ``project`` (any project when None)."""
        found = self.list(agent_id=agent_id, project=project, limit=1)
        return found[0] if found else None

    def delete(self, checkpoint_id: str) -> None:
        if self.service.viewer is not None:
            self.get(checkpoint_id)  # another agent's is not found
        if not self.service.store.delete_checkpoint(self._tenant, checkpoint_id):
            raise NotFoundError(f"checkpoint {checkpoint_id}")

    # ------------------------------------------------------------------ restoring
    def render(
        self, checkpoint: Checkpoint, now: datetime | None = None, max_chars: int | None = None
    ) -> str:
        """The restore block, within ``max_chars`` (a host's own cap) or the configured one."""
        return render(checkpoint, max_chars or self.config.max_prepend_chars, now)

    def restore(
        self, agent_id: str, project: str | None = None, now: datetime | None = None
    ) -> str:
        """The restore block for the agent's newest checkpoint in ``project``; ``""`` if none."""
        checkpoint = self.latest(agent_id, project)
        return "" if checkpoint is None else self.render(checkpoint, now)


def event_data(event: Event) -> dict[str, Any]:
    """An event as plain data that ``parse_events`` reads back (the REST body of a save)."""
    if isinstance(event, Message):
        return {"role": event.role, "content": event.text}
    if isinstance(event, ToolUse):
        return {"tool": event.name, "arguments": dict(event.arguments), "id": event.id}
    return {"result_of": event.id, "success": event.success}


def dump(checkpoint: Checkpoint) -> dict[str, Any]:
    """The wire shape of a checkpoint (REST, MCP, ``--json``)."""
    data: dict[str, Any] = json.loads(checkpoint.model_dump_json())
    return data
