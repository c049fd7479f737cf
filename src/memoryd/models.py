"""The memory record and its vocabulary.

The field set is the ourmem memory model (29 fields, in its serialisation
order) plus memoryd additions that the seeds need and ourmem lacks:
``valid_from`` / ``valid_to`` (when the fact held in the world, which is not
when it was stored) and ``expires_at`` (retention), ``key`` (one memory
per slot, for callers that upsert), and ``marks``: memoryd's own bookkeeping
(the slot a distilled fact fills, its value; a turn that is tool output),
kept apart from ``tags`` because tags are the caller's and every client shows
them to the user and puts them into prompts.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from memoryd.terms import (
    ABOUT_PREFIX,
    LIKING_MARK,
    MAX_L0_CHARS,
    MAX_L1_CHARS,
    MAX_L2_CHARS,
    MENTION_MARK,
    NOT_A_VALUE_MARKS,
    NOTHING_MARK,
    OTHER_MARK,
    PAST_MARK,
    PLAN_MARK,
    SQLITE_MAX_INT,
    TOOL_OUTPUT_MARK,
    Category,
    MemberStatus,
    MemoryType,
    RelationType,
    Role,
    SpaceType,
    State,
    Status,
    Tier,
    format_ts,
    lone_surrogate,
    new_id,
    normalise_space_id,
    parse_ts,
    personal_space,
    to_utc,
    utcnow,
    wire,
)

__all__ = [
    "ABOUT_PREFIX",
    "LIKING_MARK",
    "MAX_L0_CHARS",
    "MAX_L1_CHARS",
    "MAX_L2_CHARS",
    "MENTION_MARK",
    "NOTHING_MARK",
    "NOT_A_VALUE_MARKS",
    "OTHER_MARK",
    "PAST_MARK",
    "PLAN_MARK",
    "SQLITE_MAX_INT",
    "TOOL_OUTPUT_MARK",
    "ApiKey",
    "AutoShareRule",
    "Category",
    "IngestResult",
    "Member",
    "MemberStatus",
    "Memory",
    "MemoryType",
    "Message",
    "Provenance",
    "Relation",
    "RelationType",
    "Role",
    "ScoredMemory",
    "SearchResponse",
    "SearchTrace",
    "Space",
    "SpaceType",
    "StageTrace",
    "State",
    "Status",
    "Tenant",
    "Tier",
    "format_ts",
    "lone_surrogate",
    "new_id",
    "normalise_space_id",
    "parse_ts",
    "personal_space",
    "to_utc",
    "utcnow",
    "wire",
]


class Relation(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    relation_type: RelationType
    target_id: str
    context_label: str | None = None


class Provenance(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    shared_from_space: str
    shared_from_memory: str
    shared_by_user: str
    shared_by_agent: str = ""
    shared_at: datetime
    original_created_at: datetime
    source_version: int | None = Field(default=None, ge=0, le=SQLITE_MAX_INT)


class Memory(BaseModel):
    """One durable memory. ``content`` is the ground truth that is embedded and indexed."""

    model_config = ConfigDict(validate_assignment=False, use_enum_values=False, defer_build=True)

    id: str = Field(default_factory=new_id)
    content: str
    l0_abstract: str = ""
    l1_overview: str = ""
    l2_content: str = ""
    category: Category = Category.PREFERENCES
    memory_type: MemoryType = MemoryType.PINNED
    state: State = State.ACTIVE
    tier: Tier = Tier.PERIPHERAL
    importance: float = Field(default=0.5, ge=0.0, le=1.0)
    confidence: float = Field(default=0.5, ge=0.0, le=1.0)
    access_count: int = Field(default=0, ge=0, le=SQLITE_MAX_INT)
    tags: list[str] = Field(default_factory=list)
    scope: str = "global"
    agent_id: str | None = None
    session_id: str | None = None
    tenant_id: str = ""
    source: str | None = None
    relations: list[Relation] = Field(default_factory=list)
    superseded_by: str | None = None
    invalidated_at: datetime | None = None
    created_at: datetime = Field(default_factory=utcnow)
    updated_at: datetime = Field(default_factory=utcnow)
    last_accessed_at: datetime | None = None
    space_id: str = ""
    visibility: str = "global"
    owner_agent_id: str = ""
    provenance: Provenance | None = None
    version: int | None = Field(default=1, ge=0, le=SQLITE_MAX_INT)
    # memoryd additions
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    expires_at: datetime | None = None
    key: str | None = None
    marks: list[str] = Field(default_factory=list)

    @field_validator(
        "invalidated_at",
        "created_at",
        "updated_at",
        "last_accessed_at",
        "valid_from",
        "valid_to",
        "expires_at",
        mode="before",
    )
    @classmethod
    def _utc(cls, value: Any) -> Any:
        return parse_ts(value) if isinstance(value, str | datetime) else value

    @field_validator("tags", mode="before")
    @classmethod
    def _tags(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [t.strip() for t in value.split(",") if t.strip()]
        return value

    def status_at(self, at: datetime | None = None) -> Status:
        """What this memory is at ``at`` (now by default); the store's ``live_at``
        filter selects the same memories as ``Status.CURRENT``."""
        at = at or utcnow()
        if self.state is State.DELETED:
            return Status.DELETED
        if self.state is State.ARCHIVED:
            return Status.ARCHIVED
        if self.expires_at is not None and self.expires_at <= at:
            return Status.EXPIRED
        retired = self.invalidated_at is not None and self.invalidated_at <= at
        if self.valid_from is not None and self.valid_from > at and not retired:
            return Status.PENDING  # (one replaced before its date never comes to hold)
        over = retired or (self.valid_to is not None and self.valid_to <= at)
        if not over:
            return Status.CURRENT
        return Status.SUPERSEDED if self.superseded_by else Status.ENDED

    @property
    def status(self) -> Status:
        return self.status_at()

    @property
    def said_at(self) -> datetime:
        """When what it says was said (or began to hold): its ``valid_from``, else when it
        was stored. Which of two values is newer is decided by this, never by storage."""
        return self.valid_from or self.created_at

    def is_live(self, at: datetime) -> bool:
        """Valid at ``at``: active, not superseded, ended or expired by then."""
        return self.status_at(at) is Status.CURRENT

    def to_json(self) -> dict[str, Any]:
        """Wire form: every key present, ``id`` first, timestamps with 6 digits."""
        data = self.model_dump(mode="python")
        out: dict[str, Any] = {}
        for name, value in data.items():
            if isinstance(value, datetime):
                out[name] = format_ts(value)
            elif name == "provenance" and value is not None:
                out[name] = {
                    k: (format_ts(v) if isinstance(v, datetime) else v) for k, v in value.items()
                }
            elif name == "relations":
                out[name] = [{**r, "relation_type": str(r["relation_type"])} for r in value]
            elif isinstance(value, StrEnum):
                out[name] = value.value
            else:
                out[name] = value
        out["status"] = self.status.value  # derived, read-only: what holds now
        return out


class ScoredMemory(BaseModel):
    """A search hit. ``score`` ranks (the best hit is 1.0); ``similarity`` is absolute.

    ``similarity`` is the cosine of the query's and the memory's vectors, the
    same for a memory whatever else the search found: a low one says "nothing
    relevant" where the relative score cannot. None when the query could not
    be embedded.
    """

    model_config = ConfigDict(defer_build=True)

    memory: Memory
    score: float
    similarity: float | None = None


class Message(BaseModel):
    """One conversation message as a door receives it."""

    model_config = ConfigDict(extra="ignore", defer_build=True)

    role: str
    content: str
    created_at: datetime | None = None

    @field_validator("created_at", mode="before")
    @classmethod
    def _utc(cls, value: Any) -> Any:
        return parse_ts(value) if isinstance(value, str | datetime) else value


class StageTrace(BaseModel):
    model_config = ConfigDict(defer_build=True)
    name: str
    input_count: int
    output_count: int
    duration_ms: float
    score_range: tuple[float, float] | None = None


class SearchTrace(BaseModel):
    model_config = ConfigDict(defer_build=True)
    stages: list[StageTrace] = Field(default_factory=list)
    total_duration_ms: float = 0.0
    final_count: int = 0


class SearchResponse(BaseModel):
    model_config = ConfigDict(defer_build=True)
    results: list[ScoredMemory]
    trace: SearchTrace | None = None


class IngestResult(BaseModel):
    model_config = ConfigDict(defer_build=True)
    task_id: str
    session_id: str
    stored_count: int
    memory_ids: list[str] = Field(default_factory=list)


# ---------------------------------------------------------------------- tenancy
class Member(BaseModel):
    model_config = ConfigDict(defer_build=True)
    user_id: str
    role: Role
    joined_at: datetime
    status: MemberStatus = MemberStatus.ACTIVE


class AutoShareRule(BaseModel):
    """Copy new memories of ``source_space`` that match into the rule's space."""

    model_config = ConfigDict(defer_build=True)

    id: str = Field(default_factory=new_id)
    source_space: str
    categories: list[str] = Field(default_factory=list)
    tags: list[str] = Field(default_factory=list)
    min_importance: float = 0.0
    require_approval: bool = False
    created_at: datetime = Field(default_factory=utcnow)


class Space(BaseModel):
    model_config = ConfigDict(defer_build=True)
    id: str
    space_type: SpaceType
    name: str = ""
    owner_id: str
    members: list[Member] = Field(default_factory=list)
    auto_share_rules: list[AutoShareRule] = Field(default_factory=list)
    created_at: datetime = Field(default_factory=utcnow)
    updated_at: datetime = Field(default_factory=utcnow)

    def role_of(self, user_id: str) -> Role | None:
        """The user's role as an active member; None for an outsider or one only invited."""
        if user_id == self.owner_id:
            return Role.ADMIN
        member = self.member(user_id)
        return member.role if member and member.status is MemberStatus.ACTIVE else None

    def member(self, user_id: str) -> Member | None:
        return next((m for m in self.members if m.user_id == user_id), None)


class Tenant(BaseModel):
    model_config = ConfigDict(defer_build=True)
    id: str
    name: str
    status: str = "active"
    created_at: datetime = Field(default_factory=utcnow)


class ApiKey(BaseModel):
    """A key's public record; the secret itself is shown once and stored hashed."""

    model_config = ConfigDict(defer_build=True)

    id: str
    tenant_id: str
    prefix: str
    name: str = ""
    created_at: datetime
    revoked_at: datetime | None = None
    last_used_at: datetime | None = None
