"""How tool results read to an agent: short lines with the ids it needs next, or JSON.

A search or list result gives each memory's id, category, tags, age and,
for what another user shared, who shared it, before its content, because
the agent's next step (get, update, forget, share) needs the id, and the age
and the sharer tell it how much to trust the fact.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from memoryd.inject import relative_age, shared_by
from memoryd.models import parse_ts

Json = dict[str, Any]
LIST_PREVIEW_CHARS = 200


def dump(data: Json) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False)


def _age(created_at: Any) -> str:
    """'3d ago': how an agent weighs a memory's freshness at a glance."""
    try:
        then = parse_ts(str(created_at)) if created_at else None
    except ValueError:
        return ""
    return "" if then is None else relative_age(then)


def _line(memory: Json) -> str:
    """The header of one memory: id, category, tags and age."""
    parts = [f"id: {memory.get('id')}", str(memory.get("category", ""))]
    if memory.get("tags"):
        parts.append("tags: " + ", ".join(str(t) for t in memory["tags"]))
    age = _age(memory.get("created_at"))
    if age:
        parts.append(age)
    sharer = shared_by(memory)
    if sharer:  # what another user put in a shared space is not the user's own
        parts.append(f"shared by user {sharer}")
    return " | ".join(p for p in parts if p)


def render_search(data: Json) -> str:
    results = data.get("results") or []
    if not results:
        return "No memories found."
    lines = [f"Found {len(results)} memor{'y' if len(results) == 1 else 'ies'}:"]
    for i, r in enumerate(results, 1):
        memory = r.get("memory") or {}
        lines.append(f"{i}. (score: {float(r.get('score', 0.0)):.2f}) {_line(memory)}")
        lines.append(f"   {memory.get('content', '')}")
    return "\n".join(lines)


def render_list(data: Json) -> str:
    memories = data.get("memories") or []
    if not memories:
        return "No memories stored yet."
    total = data.get("total_count", len(memories))
    lines = [f"{len(memories)} most recent of {total} memories:"]
    for i, m in enumerate(memories, 1):
        content = str(m.get("content", ""))
        if len(content) > LIST_PREVIEW_CHARS:
            content = content[:LIST_PREVIEW_CHARS] + "…"
        lines.append(f"{i}. {_line(m)}")
        lines.append(f"   {content}")
    return "\n".join(lines)


def titled(title: str) -> Callable[[Json], str]:
    return lambda data: f"{title}:\n{dump(data)}"
