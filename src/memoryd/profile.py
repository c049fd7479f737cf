"""The synthesized user profile (reference §4.11): stable facts and what is going on now.

``profile`` is the same content as one readable string, for clients that
inject it into a prompt as it is.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import timedelta
from typing import Any

from memoryd.ingest.reconcile import slot_value
from memoryd.ingest.slots import single_valued
from memoryd.models import (
    ABOUT_PREFIX,
    LIKING_MARK,
    NOT_A_VALUE_MARKS,
    Category,
    Memory,
    MemoryType,
    State,
    utcnow,
)
from memoryd.service import MemoryService
from memoryd.store import MemoryFilter
from memoryd.text.attribute_tables import ATTRIBUTES
from memoryd.text.conversation import spoken

SCAN_LIMIT = 200
MAX_STATIC_FACTS = 20
MAX_PER_ATTRIBUTE = 20
MAX_DYNAMIC = 10
DYNAMIC_WINDOW_DAYS = 7
MAX_SEARCH_RESULTS = 10
STATIC_CATEGORIES = (Category.PROFILE, Category.PREFERENCES)
DYNAMIC_CATEGORIES = (Category.EVENTS, Category.CASES, Category.PATTERNS)


# the marks of a statement that holds no value of the user's now (a liking still does)
NOT_A_USER_VALUE = NOT_A_VALUE_MARKS - {LIKING_MARK}


def holds_for_user(memory: Memory) -> bool:
    """Not another person's fact, a plan or what held once: what the profile and the
    SessionStart block list as true of the user now (both read it here)."""
    return not NOT_A_USER_VALUE & set(memory.marks)


def build_profile(service: MemoryService, query: str | None = None) -> dict[str, Any]:
    now = utcnow()
    rows, _ = service.store.list_memories(
        service.tenant_id,
        [service.space_id],
        service.scoped(
            MemoryFilter(state=[State.ACTIVE], live_at=now, exclude_types=(MemoryType.SESSION,))
        ),
        limit=SCAN_LIMIT,
    )
    stated = attribute_holders(service)
    # what holds for the user: not another person's fact, a plan, or what held once
    rows = [m for m in rows if holds_for_user(m)]
    static = sorted(
        current_facts([*(m for m in rows if m.category in STATIC_CATEGORIES), *stated]),
        key=lambda m: -m.importance,
    )[:MAX_STATIC_FACTS]
    since = now - timedelta(days=DYNAMIC_WINDOW_DAYS)
    dynamic = [m for m in rows if m.category in DYNAMIC_CATEGORIES and m.created_at >= since][
        :MAX_DYNAMIC
    ]
    results = None
    if query and query.strip():
        found = service.search(query, limit=MAX_SEARCH_RESULTS, spaces=[service.space_id])
        results = [
            {
                "score": r.score,
                "memory": {
                    "id": r.memory.id,
                    "content": r.memory.content,
                    "category": r.memory.category.value,
                    "tags": r.memory.tags,
                },
            }
            for r in found.results
        ]
    return {
        "static_facts": [m.content for m in static],
        "dynamic_context": [m.content for m in dynamic],
        "search_results": results,
        "profile": _as_text(static, dynamic),
    }


def attribute_holders(service: MemoryService) -> list[Memory]:
    """The user's current statement of each attribute (``memoryd.ingest.attributes``) that
    the profile's categories do not already hold: "I drive a Civic" said in words no rule
    reads, or a fact filed as an event, is still where the profile says what holds."""
    now = utcnow()
    out: list[Memory] = []
    for name, (single, _) in ATTRIBUTES.items():
        rows, _ = service.store.list_memories(
            service.tenant_id,
            [service.space_id],
            service.scoped(MemoryFilter(marks=[ABOUT_PREFIX + name], live_at=now)),
            limit=MAX_PER_ATTRIBUTE,
            with_total=False,
        )
        # the user's own values: a liking is one of them, another person's fact or a plan not
        mine = [m for m in rows if holds_for_user(m)]
        stated = [m for m in mine if m.memory_type is not MemoryType.SESSION]
        if stated and all(m.category in STATIC_CATEGORIES for m in stated):
            continue  # distilled or pinned as the user's: the profile lists it already
        # a fact filed under another category ("I speak Cantonese" as an event) still says
        # what holds for the user; a turn stands for its words when nothing was distilled
        newest = sorted(stated or mine, key=lambda m: m.said_at, reverse=True)
        for memory in newest[:1] if single else newest:
            if memory.memory_type is MemoryType.SESSION:
                memory = memory.model_copy(update={"content": spoken(memory.content)})
            out.append(memory)
    return out


def current_facts(memories: Iterable[Memory]) -> list[Memory]:
    """Each fact once, and only its current value.

    The newest memory of a slot that holds one value at a time ("lives_in")
    stands for it; a value said twice (pinned and distilled, or in other
    words) is listed once; memories without a slot are compared by their words.
    """
    newest_first = sorted(memories, key=lambda m: m.said_at, reverse=True)
    seen: set[tuple[str, ...]] = set()
    out = []
    for memory in newest_first:
        slot, value, negative = slot_value(memory)
        words = " ".join(memory.content.casefold().split()).rstrip(".!。！")
        keys: set[tuple[str, ...]] = {("text", words)}
        if slot is not None and single_valued(slot):
            keys.add(("slot", slot))
        elif slot is not None and value is not None:
            keys.add(("value", slot, value.casefold(), str(negative)))
        if keys & seen:
            continue
        seen |= keys
        out.append(memory)
    return out


def _as_text(static: list[Memory], dynamic: list[Memory]) -> str:
    parts = []
    if static:
        parts.append("About the user:\n" + "\n".join(f"- {m.content}" for m in static))
    if dynamic:
        parts.append("Recently:\n" + "\n".join(f"- {m.content}" for m in dynamic))
    return "\n\n".join(parts)
