"""LangGraph's long-term memory on memoryd: a ``BaseStore`` backed by a memoryd store.

::

    from memoryd import Memory
    from memoryd.agents.frameworks.langgraph import MemorydStore

    store = MemorydStore(Memory())             # or RemoteMemory(url, api_key)
    graph = builder.compile(store=store)       # nodes get it as ``store: BaseStore``

An item is one memoryd memory: its text (the value's ``content``, ``text``,
``memory`` or ``data`` field, else the value as JSON) is what search
embeds and ranks, and the value itself is kept whole in the memory's full
content layer. ``put`` with the same namespace and key supersedes the
previous value (memoryd keeps it in history, ``as_of`` still finds it);
``delete`` is memoryd's soft delete. Namespaces and keys travel in tags, so
``search`` by namespace prefix is a tag filter in memoryd's own search.
"""

from __future__ import annotations

import asyncio
import builtins
import json
import operator
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import Any, Protocol, Unpack
from urllib.parse import quote, unquote

from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)

from memoryd.errors import ValidationError
from memoryd.models import Memory as MemoryRecord
from memoryd.models import ScoredMemory
from memoryd.options import AddFields, ListFilters, SearchOptions

TAG = "langgraph"
NS_TAG = "lg-ns:"
ITEM_TAG = "lg-item:"
SOURCE = "langgraph"
TEXT_FIELDS = ("content", "text", "memory", "data")
PAGE = 1000  # memoryd's largest list page
OPERATORS: dict[str, Callable[[Any, Any], Any]] = {
    "$eq": operator.eq,
    "$ne": operator.ne,
    "$gt": operator.gt,
    "$gte": operator.ge,
    "$lt": operator.lt,
    "$lte": operator.le,
}


class SdkMemory(Protocol):
    """memoryd's ``Memory`` or ``RemoteMemory``: the calls the store makes."""

    def add(self, content: str, **fields: Unpack[AddFields]) -> MemoryRecord: ...

    def delete(self, memory_id: str) -> None: ...

    def list(self, **filters: Unpack[ListFilters]) -> builtins.list[MemoryRecord]: ...

    def search(
        self, query: str, **options: Unpack[SearchOptions]
    ) -> builtins.list[ScoredMemory]: ...


def _path(namespace: Sequence[str]) -> str:
    return "/".join(quote(part, safe="") for part in namespace)


def _item_tag(namespace: Sequence[str], key: str) -> str:
    return f"{ITEM_TAG}{_path(namespace)}#{quote(key, safe='')}"


def _prefix_tags(namespace: Sequence[str]) -> list[str]:
    return [NS_TAG + _path(namespace[: n + 1]) for n in range(len(namespace))]


def _address(memory: MemoryRecord) -> tuple[tuple[str, ...], str] | None:
    for tag in memory.tags:
        if tag.startswith(ITEM_TAG):
            path, _, key = tag[len(ITEM_TAG) :].partition("#")
            return tuple(unquote(p) for p in path.split("/")) if path else (), unquote(key)
    return None


def _text(value: dict[str, Any]) -> str:
    for name in TEXT_FIELDS:
        if isinstance(value.get(name), str) and value[name].strip():
            return str(value[name])
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _live(memory: MemoryRecord) -> bool:
    return memory.superseded_by is None and memory.invalidated_at is None


def _compare(op: str, have: Any, want: Any) -> bool:
    if op not in OPERATORS:
        raise ValidationError(f"unsupported filter operator {op!r}; use {', '.join(OPERATORS)}")
    if op in ("$eq", "$ne"):
        return bool(OPERATORS[op](have, want))
    try:
        return have is not None and bool(OPERATORS[op](have, want))
    except TypeError:  # values that do not order against each other do not match
        return False


def _matches(value: dict[str, Any], conditions: dict[str, Any] | None) -> bool:
    """LangGraph's filter: equality per field, or ``{"$eq"|"$ne"|"$gt"|…: x}``."""
    for field, want in (conditions or {}).items():
        have = value.get(field)
        tests = want.items() if isinstance(want, dict) else [("$eq", want)]
        if not all(_compare(op, have, x) for op, x in tests):
            return False
    return True


class MemorydStore(BaseStore):
    """A LangGraph store whose items are memoryd memories."""

    def __init__(self, memory: SdkMemory | None = None) -> None:
        if memory is None:
            from memoryd.sdk import Memory

            memory = Memory()
        self.memory = memory

    # ------------------------------------------------------------------ BaseStore
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        results: list[Result] = []
        for op in ops:
            if isinstance(op, GetOp):
                results.append(self._get(op))
            elif isinstance(op, PutOp):
                self._put(op)
                results.append(None)
            elif isinstance(op, SearchOp):
                results.append(self._search(op))
            elif isinstance(op, ListNamespacesOp):
                results.append(self._namespaces(op))
            else:
                raise ValidationError(f"unknown store operation {type(op).__name__}")
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        return await asyncio.to_thread(self.batch, list(ops))

    # ------------------------------------------------------------------ operations
    def _current(self, namespace: Sequence[str], key: str) -> MemoryRecord | None:
        rows = self.memory.list(tags=[_item_tag(namespace, key)], limit=20)
        live = [m for m in rows if _live(m)]
        return max(live, key=lambda m: m.updated_at, default=None)

    def _get(self, op: GetOp) -> Item | None:
        memory = self._current(op.namespace, op.key)
        return None if memory is None else self._item(memory)

    def _put(self, op: PutOp) -> None:
        current = self._current(op.namespace, op.key)
        if op.value is None:
            if current is not None:
                self.memory.delete(current.id)
            return
        value = dict(op.value)
        payload = json.dumps(value, ensure_ascii=False, sort_keys=True)
        text = _text(value)
        if current is not None and text == current.content and current.l2_content != payload:
            self.memory.delete(current.id)  # the same words, another value: a new memory
        self.memory.add(
            text,
            key=f"{SOURCE}:{_item_tag(op.namespace, op.key)}",
            tags=[TAG, _item_tag(op.namespace, op.key), *_prefix_tags(op.namespace)],
            l2_content=payload,
            source=SOURCE,
        )

    def _search(self, op: SearchOp) -> list[SearchItem]:
        tags = [TAG, *(_prefix_tags(op.namespace_prefix)[-1:])]
        want = op.offset + op.limit
        found: list[tuple[MemoryRecord, float | None]]
        if op.query:
            hits = self.memory.search(op.query, tags=tags, limit=min(PAGE, max(want * 3, 10)))
            found = [(h.memory, h.score) for h in hits]
        else:
            rows = self.memory.list(tags=tags, limit=PAGE, sort="updated_at")
            found = [(m, None) for m in rows if _live(m)]
        items = [
            self._item(m, score)
            for m, score in found
            if _address(m) is not None and _matches(self._value(m), op.filter)
        ]
        return items[op.offset : want]

    def _namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        seen: set[tuple[str, ...]] = set()
        offset = 0
        while True:
            rows = self.memory.list(tags=[TAG], limit=PAGE, offset=offset)
            for memory in rows:
                address = _address(memory)
                if address is None or not _live(memory):
                    continue
                namespace = address[0]
                if all(_condition(c, namespace) for c in op.match_conditions or ()):
                    seen.add(namespace[: op.max_depth] if op.max_depth else namespace)
            if len(rows) < PAGE:
                break
            offset += PAGE
        return sorted(seen)[op.offset : op.offset + op.limit]

    # ------------------------------------------------------------------ items
    @staticmethod
    def _value(memory: MemoryRecord) -> dict[str, Any]:
        try:
            value = json.loads(memory.l2_content or "")
        except ValueError:
            value = None
        return value if isinstance(value, dict) else {"content": memory.content}

    def _item(self, memory: MemoryRecord, score: float | None = None) -> SearchItem:
        address = _address(memory)
        namespace, key = address if address is not None else ((), memory.id)
        created: datetime = memory.created_at
        return SearchItem(
            namespace=namespace,
            key=key,
            value=self._value(memory),
            created_at=created,
            updated_at=memory.updated_at,
            score=score,
        )


def _condition(condition: Any, namespace: tuple[str, ...]) -> bool:
    path = tuple(condition.path)
    part = namespace[: len(path)] if condition.match_type == "prefix" else namespace[-len(path) :]
    if len(part) != len(path):
        return False
    return all(p == "*" or p == n for p, n in zip(path, part, strict=True))
