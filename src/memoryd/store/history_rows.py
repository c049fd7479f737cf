"""A memory's history rows as both stores write and read them; only the SQL placeholder differs.

A change records the fields it moved, before and after, as JSON; an export
carries the rows as they are and an import writes them back unchanged.
"""

from __future__ import annotations

import json
from typing import Any

from memoryd.models import Memory, utcnow
from memoryd.store.rows import to_us

_COLUMNS = "memory_id, tenant_id, space_id, action, old_value, new_value, actor, at"


def history_insert(placeholder: str) -> str:
    """The INSERT of one history row, with the backend's parameter ``placeholder``."""
    return f"INSERT INTO memory_history({_COLUMNS}) VALUES ({', '.join([placeholder] * 8)})"


def as_json(value: Any) -> str | None:
    return None if value is None else json.dumps(value, ensure_ascii=False)


# what a new memory's fields hold when they hold nothing
_EMPTY: tuple[Any, ...] = (None, "", [], {})


def created(memory: Memory) -> dict[str, Any]:
    """A new memory as its ``create`` row records it: every field that holds something
    (nothing held is the model's default), and the full text (``l2_content``) only where
    it is more than ``content``. A history row is kept for every memory ever stored: the
    empty fields were a third of a memory's bytes on disk."""
    fields = memory.to_json()
    if fields.get("l2_content") == fields.get("content"):
        del fields["l2_content"]
    return {k: v for k, v in fields.items() if v not in _EMPTY}


def created_values(memory: Memory, actor: str | None, at: int | None) -> tuple[Any, ...]:
    """The ``create`` row of a new memory: what it held as it was stored."""
    return (
        memory.id,
        memory.tenant_id,
        memory.space_id,
        "create",
        None,
        as_json(created(memory)),
        actor,
        at,
    )


def change_values(old: Memory, new: Memory, action: str, actor: str | None) -> tuple[Any, ...]:
    """The row of a change from ``old`` to ``new``: the fields it moved, now."""
    before, after = old.to_json(), new.to_json()
    changed = {k for k in after if before.get(k) != after[k]}
    return (
        new.id,
        new.tenant_id,
        new.space_id,
        action,
        as_json({k: before.get(k) for k in changed}),
        as_json({k: after[k] for k in changed}),
        actor,
        to_us(utcnow()),
    )


def imported_values(tenant_id: str, space_id: str, row: dict[str, Any]) -> tuple[Any, ...]:
    """The row of an exported history entry (``at`` in microseconds), written back."""
    return (
        row["memory_id"],
        tenant_id,
        space_id,
        row["action"],
        as_json(row["old"]),
        as_json(row["new"]),
        row["actor"],
        row["at"],
    )


def history_entry(
    action: str, old: str | None, new: str | None, actor: str | None, at: int
) -> dict[str, Any]:
    """A stored history row as the stores answer it: the moved fields parsed."""
    return {
        "action": action,
        "old": json.loads(old) if old else None,
        "new": json.loads(new) if new else None,
        "actor": actor,
        "at": at,
    }
