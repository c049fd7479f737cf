"""What a list or search may see: one filter object, turned into SQL in one place.

Every query the store runs is scoped by tenant and space here, so no door can
forget to scope one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from memoryd.errors import ValidationError
from memoryd.models import TOOL_OUTPUT_MARK, Category, MemoryType, State, Tier
from memoryd.store.rows import to_us
from memoryd.store.scopes import Viewer, visible_sql

# Each tag is one condition of the query; SQLite refuses an expression tree
# past 1,000 terms, and no real filter needs more than a few tags.
MAX_FILTER_TAGS = 50


@dataclass
class MemoryFilter:
    """Conditions a memory must meet. ``None`` means "any"."""

    scope: str | None = None
    tags: Sequence[str] | None = None  # the memory must carry all of them
    marks: Sequence[str] | None = None  # memoryd's bookkeeping: all of them, like tags
    # leave out turns that are tool output (search does, unless asked). Not narrowing:
    # the vector index never holds tool output (store.search._sync_index)
    without_tool_output: bool = False
    source: str | None = None  # prefix match
    agent_id: str | None = None
    session_id: str | None = None
    # the conversation being recalled for: its turns are in the agent's context already
    not_session_id: str | None = None
    category: Sequence[Category] | None = None
    memory_type: Sequence[MemoryType] | None = None
    # None: everything but deleted; only active ones with ``live_at`` or ``as_of`` (search)
    state: Sequence[State] | None = None
    tier: Sequence[Tier] | None = None
    key: str | None = None
    ids: Sequence[str] | None = None
    superseded_by: str | None = None  # the memory that replaced what this one states
    created_after: datetime | None = None
    created_before: datetime | None = None
    # Live-ness: ``live_at`` keeps memories that were valid at that instant
    # (not superseded, expired or outside valid_from/valid_to); ``as_of``
    # does the same for history, so superseded memories count again.
    live_at: datetime | None = None
    as_of: datetime | None = None
    exclude_types: Sequence[MemoryType] = field(default_factory=tuple)
    # the agent (and session) asking: only the scopes it may see (memoryd.store.scopes)
    viewer: Viewer | None = None

    def __post_init__(self) -> None:
        if self.tags is not None and len(self.tags) > MAX_FILTER_TAGS:
            raise ValidationError(
                f"a filter may name at most {MAX_FILTER_TAGS} tags, got {len(self.tags)}"
            )

    def is_narrowing(self) -> bool:
        """True when the filter needs SQL beyond the live-ness the vector index knows."""
        return any(
            v not in (None, (), [])
            for v in (
                self.scope,
                self.tags,
                self.marks,
                self.source,
                self.agent_id,
                self.session_id,
                self.not_session_id,
                self.category,
                self.memory_type,
                self.state,
                self.tier,
                self.key,
                self.ids,
                self.superseded_by,
                self.created_after,
                self.created_before,
                self.as_of,
                self.exclude_types or None,
                self.viewer,
            )
        )

    def pinpoints(self) -> bool:
        """True when the filter names a few rows that an index of their own finds: a
        session's turns, a key, the turns a memory superseded, ids, a mark."""
        return any(
            v is not None
            for v in (self.session_id, self.key, self.superseded_by, self.ids, self.marks)
        )


def _in(column: str, values: Sequence[Any]) -> tuple[str, list[Any]]:
    marks = ", ".join("?" for _ in values)
    return f"{column} IN ({marks})", [getattr(v, "value", v) for v in values]


def where_clause(
    tenant_id: str, space_ids: Sequence[str], f: MemoryFilter
) -> tuple[str, list[Any]]:
    """``WHERE`` text (without the keyword) over alias ``m``, and its parameters.

    Access is membership: a tenant sees the rows of ``space_ids`` only where it
    is an active member of the space (its personal space included), whoever
    wrote them; an invitation it has not accepted gives it nothing. The check is
    in the SQL itself, so a door that passes a wrong space id gets nothing back
    rather than someone else's memories. A viewer (an agent) sees only the
    scopes the rule of ``memoryd.store.scopes`` gives it.
    """
    # A memory's marks are found by their own index (memory_marks): the space terms are
    # then kept off the space indexes ("+"), which SQLite, with no statistics, would
    # rather walk, reading every memory of the space
    space = "+m.space_id" if f.marks else "m.space_id"
    sql, p = _in(space, space_ids)
    parts: list[str] = [
        sql,
        f"{space} IN (SELECT sm.space_id FROM space_members sm "
        "WHERE sm.user_id = ? AND sm.status = 'active')",
    ]
    params: list[Any] = [*p, tenant_id]
    if f.viewer is not None:
        sql, p = visible_sql(tenant_id, f.viewer)
        parts.append(sql)
        params += p
    if f.state:
        sql, p = _in("m.state", f.state)
        parts.append(sql)
        params += p
    elif f.live_at is not None or f.as_of is not None:
        parts.append("m.state = 'active'")  # what holds: archived memories are put away
    else:
        parts.append("m.state != 'deleted'")
    # a filter that names a few rows finds them by their own index, not by walking every
    # memory of a type (memories_space_type): the type term is kept off the index ("+")
    kind = "+m.memory_type" if f.pinpoints() else "m.memory_type"
    for column, values in (
        ("m.category", f.category),
        (kind, f.memory_type),
        ("m.tier", f.tier),
        ("m.id", f.ids),
    ):
        if values:
            sql, p = _in(column, values)
            parts.append(sql)
            params += p
    if f.exclude_types:
        sql, p = _in(kind, f.exclude_types)
        parts.append(f"NOT ({sql})")
        params += p
    for column, value in (
        ("m.scope", f.scope),
        ("m.agent_id", f.agent_id),
        ("m.session_id", f.session_id),
        ("m.key", f.key),
        ("m.superseded_by", f.superseded_by),
    ):
        if value is not None:
            parts.append(f"{column} = ?")
            params.append(value)
    if f.not_session_id is not None:
        parts.append("m.session_id IS NOT ?")
        params.append(f.not_session_id)
    if f.source is not None:
        parts.append("substr(m.source, 1, ?) = ?")
        params += [len(f.source), f.source]
    for tag in f.tags or ():
        parts.append("EXISTS (SELECT 1 FROM json_each(m.tags) WHERE json_each.value = ?)")
        params.append(tag)
    for mark in f.marks or ():
        parts.append("m.rowid IN (SELECT memory_rowid FROM memory_marks WHERE mark = ?)")
        params.append(mark)
    if f.without_tool_output:
        parts.append("NOT EXISTS (SELECT 1 FROM json_each(m.marks) WHERE json_each.value = ?)")
        params.append(TOOL_OUTPUT_MARK)
    if f.created_after is not None:
        parts.append("m.created_at >= ?")
        params.append(to_us(f.created_after))
    if f.created_before is not None:
        parts.append("m.created_at < ?")
        params.append(to_us(f.created_before))
    if f.as_of is not None:
        at = to_us(f.as_of)
        parts.append("COALESCE(m.valid_from, m.created_at) <= ?")
        parts.append("(m.valid_to IS NULL OR m.valid_to > ?)")
        parts.append("(m.expires_at IS NULL OR m.expires_at > ?)")
        params += [at, at, at]
    elif f.live_at is not None:
        at = to_us(f.live_at)
        parts.append("(m.invalidated_at IS NULL OR m.invalidated_at > ?)")
        parts.append("(m.valid_to IS NULL OR m.valid_to > ?)")
        parts.append("(m.expires_at IS NULL OR m.expires_at > ?)")
        parts.append("(m.valid_from IS NULL OR m.valid_from <= ?)")
        params += [at, at, at, at]
    return " AND ".join(parts), params
