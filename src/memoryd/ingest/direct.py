"""Direct memories (seed 000 §1.3): the caller says exactly what to remember.

Defaults follow the ourmem model: pinned (the reconciler may not rewrite
it), category ``preferences``, embedded at once, no filters in the way.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import ValidationError as PydanticValidationError

from memoryd.errors import ValidationError
from memoryd.models import (
    MAX_L0_CHARS,
    MAX_L1_CHARS,
    Category,
    Memory,
    MemoryType,
    Relation,
    State,
    Tier,
    utcnow,
)
from memoryd.validate import (
    check_content,
    check_relations,
    check_tags,
    check_time,
    check_unit,
    first_problem,
    parse_enum,
)


def build_direct_memory(
    content: str,
    *,
    tenant_id: str,
    space_id: str,
    category: Category | str | None = None,
    memory_type: MemoryType | str | None = None,
    tier: Tier | str | None = None,
    tags: Any = None,
    marks: list[str] | None = None,
    source: str | None = None,
    scope: str | None = None,
    agent_id: str | None = None,
    session_id: str | None = None,
    importance: float | None = None,
    confidence: float | None = None,
    key: str | None = None,
    l0_abstract: str = "",
    l1_overview: str = "",
    l2_content: str | None = None,
    relations: list[Relation] | None = None,
    valid_from: datetime | str | None = None,
    valid_to: datetime | str | None = None,
    expires_at: datetime | str | None = None,
) -> Memory:
    content = check_content(content)
    valid_from = check_time("valid_from", valid_from)
    valid_to = check_time("valid_to", valid_to)
    expires_at = check_time("expires_at", expires_at)
    if valid_from and valid_to and valid_to <= valid_from:
        raise ValidationError("valid_to must be after valid_from")
    now = utcnow()
    try:
        return Memory(
            content=content,
            l0_abstract=l0_abstract,
            l1_overview=l1_overview,
            l2_content=l2_content or content,
            relations=relations or [],
            category=parse_enum(Category, category, Category.PREFERENCES),
            memory_type=parse_enum(MemoryType, memory_type, MemoryType.PINNED),
            tier=parse_enum(Tier, tier, Tier.PERIPHERAL),
            importance=check_unit("importance", importance, 0.5),
            confidence=check_unit("confidence", confidence, 0.5),
            tags=check_tags(tags),
            marks=check_tags(marks, "marks"),
            source=source or None,
            scope=scope or "global",
            agent_id=agent_id or None,
            owner_agent_id=agent_id or "",
            session_id=session_id,
            tenant_id=tenant_id,
            space_id=space_id,
            key=key or None,
            valid_from=valid_from,
            valid_to=valid_to,
            expires_at=expires_at,
            created_at=now,
            updated_at=now,
        )
    except PydanticValidationError as exc:  # a field of the wrong type
        raise ValidationError(first_problem(exc)) from None


# text fields a caller may set on an existing memory
TEXT_FIELDS = frozenset(("l0_abstract", "l1_overview", "source", "scope", "key", "superseded_by"))
TIME_FIELDS = frozenset(("valid_from", "valid_to", "expires_at", "invalidated_at"))


def parse_changes(fields: dict[str, Any]) -> dict[str, Any]:
    """Validated changes for an update; ``None`` means "leave as it is"."""
    changes: dict[str, Any] = {}
    enums: dict[str, type[Any]] = {
        "state": State,
        "category": Category,
        "tier": Tier,
        "memory_type": MemoryType,
    }
    for name, value in fields.items():
        if value is None:
            continue
        if name == "content":
            changes["content"] = changes["l2_content"] = check_content(value)
        elif name in enums:
            changes[name] = parse_enum(enums[name], value)
        elif name in ("tags", "marks"):
            changes[name] = check_tags(value, name)
        elif name in ("importance", "confidence"):
            changes[name] = check_unit(name, value, 0.5)
        elif name in TIME_FIELDS:
            changes[name] = check_time(name, value)
        elif name in TEXT_FIELDS:
            if not isinstance(value, str):
                raise ValidationError(f"{name} must be a string, got {type(value).__name__}")
            changes[name] = value
        elif name == "relations":
            changes[name] = check_relations(value)
        else:
            raise ValidationError(f"field {name!r} cannot be updated")
    return changes


# what a new value of a keyed slot keeps from the old one unless the add says otherwise
INHERITED_FIELDS = ("category", "tags", "source", "importance", "confidence", "tier", "scope")
# fields a keyed add may change on the memory that holds the slot when the content is the same
UPSERT_FIELDS = (*INHERITED_FIELDS, "valid_from", "valid_to", "expires_at")


def derived_fields(memory: Memory, content: str) -> dict[str, str]:
    """The index line and overview of a memory whose content becomes ``content``.

    Both were made from the old content (a turn's date header and context are
    not, and stay): left as they were, search would still find the old words.
    """
    if memory.memory_type is MemoryType.SESSION:
        return {}
    line = " ".join(content.split())
    derived = {}
    if memory.l0_abstract:
        derived["l0_abstract"] = line[:MAX_L0_CHARS]
    if memory.l1_overview:
        derived["l1_overview"] = line[:MAX_L1_CHARS]
    return derived
