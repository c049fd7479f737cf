"""What a checkpoint holds: the mechanical track, the summary track, and who it belongs to.

The mechanical track is what can be read off the session without judgement
(the last exchanges, tool calls, modified files, the last user message) and
is always there. The summary track (goal, progress, next step, key
findings) comes from an LLM when one is configured; offline, rules derive
what they can (the session's first request as the goal, the assistant's
last words as the next step) and ``derived`` names the fields made so, so
a reader knows which ones no model vouched for.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from memoryd.models import utcnow


class Trigger(StrEnum):
    """Why a checkpoint was saved (seed 004's hooks, in memoryd's words)."""

    AGENT_END = "agent_end"  # a completed run (Claude Code's Stop)
    TOOL = "tool"  # after a file-modifying tool call
    RESET = "reset"  # before a reset or a compaction
    SESSION_END = "session_end"
    SHUTDOWN = "shutdown"  # a flush on the way out
    MANUAL = "manual"  # a door asked for it


class Exchange(BaseModel):
    """One message of the recent conversation, cut to ``max_msg_chars``."""

    model_config = ConfigDict(extra="ignore")

    role: str
    content: str


class ToolCall(BaseModel):
    """A tool the agent called: its arguments and whether it succeeded (None: not known yet)."""

    model_config = ConfigDict(extra="ignore")

    name: str
    arguments: dict[str, object] = Field(default_factory=dict)
    success: bool | None = None
    id: str | None = None


class Mechanical(BaseModel):
    """The always-available track: read off the session, never judged."""

    model_config = ConfigDict(extra="ignore")

    first_user_message: str | None = None
    last_user_message: str | None = None
    last_assistant_message: str | None = None
    recent_messages: list[Exchange] = Field(default_factory=list)
    recent_tools: list[ToolCall] = Field(default_factory=list)
    modified_files: list[str] = Field(default_factory=list)
    started_at: datetime | None = None
    last_activity_at: datetime = Field(default_factory=utcnow)


class Summary(BaseModel):
    """Goal, progress, next step, key findings; ``derived`` names the rule-made fields."""

    model_config = ConfigDict(extra="ignore")

    goal: str | None = None
    progress: str | None = None
    next_step: str | None = None
    key_findings: list[str] = Field(default_factory=list)
    source: str = "derived"  # "llm" or "derived"
    derived: list[str] = Field(default_factory=list)
    basis: int = 0  # the save it summarises (Checkpoint.saves): an older one never wins


class Checkpoint(BaseModel):
    """One session's latest checkpoint."""

    id: str
    agent_id: str
    session_id: str
    project: str = ""
    trigger: Trigger
    saves: int = 1
    mechanical: Mechanical
    summary: Summary | None = None
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True)
class Owner:
    """Whose checkpoint: an agent's session, in a project (a working directory, or '')."""

    agent_id: str
    session_id: str
    project: str = ""
