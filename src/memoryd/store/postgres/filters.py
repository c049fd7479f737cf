"""``MemoryFilter`` in PostgreSQL's SQL: the same conditions as ``store.filters``.

Access is membership, checked in the SQL as in SQLite: a tenant sees the rows
of ``space_ids`` only where it is an active member of the space.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from memoryd.models import TOOL_OUTPUT_MARK
from memoryd.store.filters import MemoryFilter
from memoryd.store.rows import to_us
from memoryd.store.scopes import visible_sql


def _values(values: Sequence[Any]) -> list[Any]:
    return [getattr(v, "value", v) for v in values]


def contains(column: str, value: str) -> tuple[str, str]:
    """``column`` (a jsonb array) holds ``value``: served by its GIN index."""
    return f"{column} @> %s::jsonb", json.dumps([value], ensure_ascii=False)


def where_clause(
    tenant_id: str, space_ids: Sequence[str], f: MemoryFilter
) -> tuple[str, list[Any]]:
    """``WHERE`` text (without the keyword) over alias ``m``, and its parameters."""
    parts = [
        "m.space_id = ANY(%s)",
        "m.space_id IN (SELECT sm.space_id FROM space_members sm "
        "WHERE sm.user_id = %s AND sm.status = 'active')",
    ]
    params: list[Any] = [list(space_ids), tenant_id]
    if f.viewer is not None:
        sql, p = visible_sql(tenant_id, f.viewer)  # plain SQL, written with ? placeholders
        parts.append(sql.replace("?", "%s"))
        params += p
    if f.state:
        parts.append("m.state = ANY(%s)")
        params.append(_values(f.state))
    elif f.live_at is not None or f.as_of is not None:
        parts.append("m.state = 'active'")
    else:
        parts.append("m.state != 'deleted'")
    for column, values in (
        ("m.category", f.category),
        ("m.memory_type", f.memory_type),
        ("m.tier", f.tier),
        ("m.id", f.ids),
    ):
        if values:
            parts.append(f"{column} = ANY(%s)")
            params.append(_values(values))
    if f.exclude_types:
        parts.append("NOT (m.memory_type = ANY(%s))")
        params.append(_values(f.exclude_types))
    for column, value in (
        ("m.scope", f.scope),
        ("m.agent_id", f.agent_id),
        ("m.session_id", f.session_id),
        ("m.key", f.key),
        ("m.superseded_by", f.superseded_by),
    ):
        if value is not None:
            parts.append(f"{column} = %s")
            params.append(value)
    if f.not_session_id is not None:
        parts.append("m.session_id IS DISTINCT FROM %s")
        params.append(f.not_session_id)
    if f.source is not None:
        parts.append("left(m.source, %s) = %s")
        params += [len(f.source), f.source]
    for column, values in (("m.tags", f.tags), ("m.marks", f.marks)):
        for value in values or ():
            sql, param = contains(column, value)
            parts.append(sql)
            params.append(param)
    if f.without_tool_output:
        sql, param = contains("m.marks", TOOL_OUTPUT_MARK)
        parts.append(f"NOT ({sql})")
        params.append(param)
    if f.created_after is not None:
        parts.append("m.created_at >= %s")
        params.append(to_us(f.created_after))
    if f.created_before is not None:
        parts.append("m.created_at < %s")
        params.append(to_us(f.created_before))
    if f.as_of is not None:
        at = to_us(f.as_of)
        parts.append("COALESCE(m.valid_from, m.created_at) <= %s")
        parts.append("(m.valid_to IS NULL OR m.valid_to > %s)")
        parts.append("(m.expires_at IS NULL OR m.expires_at > %s)")
        params += [at, at, at]
    elif f.live_at is not None:
        at = to_us(f.live_at)
        parts.append("(m.invalidated_at IS NULL OR m.invalidated_at > %s)")
        parts.append("(m.valid_to IS NULL OR m.valid_to > %s)")
        parts.append("(m.expires_at IS NULL OR m.expires_at > %s)")
        parts.append("(m.valid_from IS NULL OR m.valid_from <= %s)")
        params += [at, at, at, at]
    return " AND ".join(parts), params
