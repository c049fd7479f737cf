"""Request bodies of the REST API: the shapes of reference §4, and memoryd's additions.

Unknown keys are ignored (clients send keys such as ``entity_context`` that
other versions do not know); a known key of the wrong type is a 422.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from memoryd.models import lone_surrogate


class Body(BaseModel):
    model_config = ConfigDict(extra="ignore")

    @model_validator(mode="before")
    @classmethod
    def _unicode(cls, data: Any) -> Any:
        if lone_surrogate(data):
            raise ValueError("the body holds a string that is not valid Unicode (a lone surrogate)")
        return data


class ChatMessage(Body):
    role: str
    content: str
    created_at: datetime | None = None


class TenantCreate(Body):
    name: str = ""


class KeyCreate(Body):
    name: str = ""


class MemoryFields(Body):
    """Fields a caller may set on a memory, when it is made and later (memoryd additions)."""

    tags: list[str] | None = None
    source: str | None = None
    category: str | None = None
    importance: float | None = None
    confidence: float | None = None
    tier: str | None = None
    scope: str | None = None
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    expires_at: datetime | None = None


class MemoryCreate(MemoryFields):
    """``messages`` (conversation ingest) wins over ``content`` (a direct memory)."""

    messages: list[ChatMessage] | None = None
    mode: str = "smart"
    agent_id: str | None = None
    session_id: str | None = None
    entity_context: str | None = None
    content: str | None = None
    key: str | None = None
    # memoryd: the id of the memory this one supersedes (kept, with history)
    replaces: str | None = None
    # memoryd: the full text behind ``content`` (a LangGraph store's value), when more
    l2_content: str | None = None


class MemoryUpdate(MemoryFields):
    content: str | None = None
    state: str | None = None


class DeleteFilter(Body):
    source: str | None = None
    tags: list[str] | None = None
    category: str | None = None
    memory_type: str | None = None
    state: str | None = None
    before: datetime | None = None


class BatchDelete(Body):
    memory_ids: list[str] | None = None
    filter: DeleteFilter | None = None
    confirm: bool = False


class MemberIn(Body):
    user_id: str
    role: str


class SpaceCreate(Body):
    name: str
    space_type: str
    members: list[MemberIn] | None = None


class SpaceUpdate(Body):
    name: str | None = None


class RoleUpdate(Body):
    role: str


class RuleCreate(Body):
    source_space: str
    categories: list[str] | None = None
    tags: list[str] | None = None
    min_importance: float = Field(default=0.0, ge=0.0, le=1.0)
    require_approval: bool = False


class ShareBody(Body):
    target_space: str
    note: str | None = None


class PullBody(Body):
    source_space: str
    visibility: str | None = None


class ReshareBody(Body):
    target_space: str | None = None


class BatchShare(Body):
    memory_ids: list[str]
    target_space: str


class ShareFilters(Body):
    categories: list[str] | None = None
    tags: list[str] | None = None
    min_importance: float | None = None


class ShareAll(Body):
    target_space: str
    filters: ShareFilters | None = None


class ShareToUser(Body):
    target_user: str
    note: str | None = None


class ShareAllToUser(Body):
    target_user: str
    filters: ShareFilters | None = None


class OrgSetup(Body):
    name: str
    members: list[MemberIn]


class PublishRule(Body):
    categories: list[str] | None = None
    min_importance: float | None = None


class OrgPublish(Body):
    memory_ids: list[str] | None = None
    auto_share_rule: PublishRule | None = None


def dump(model: BaseModel | None) -> dict[str, Any] | None:
    """A body's set fields as plain values, for the service layer."""
    return None if model is None else model.model_dump(exclude_none=True)
