"""One tenant's memories, one at a time: find one by id, change it, add one.

What the ingest stages write through (direct adds, smart ingest's decisions,
the turns a new fact retires) and what ``MemoryService`` delegates to. It
holds the engine, the tenant and, for an agent's view, the viewer, never a
``MemoryService``: the façade is built on it, not the other way round.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from functools import cached_property
from typing import TYPE_CHECKING, Any

from memoryd.errors import NotFoundError, ValidationError
from memoryd.ids import resolve_id
from memoryd.ingest.direct import build_direct_memory, derived_fields, parse_changes
from memoryd.models import ABOUT_PREFIX, Memory, parse_ts
from memoryd.store import MemoryFilter
from memoryd.tenancy.scope import TenantScope
from memoryd.validate import check_id

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from memoryd.continuity.tasks import AgentTasks

# the span in which a fact held: a memory whose span is empty would never be live
VALIDITY = ("valid_from", "valid_to")


class TenantMemories(TenantScope):
    """The tenant's memories as its owner (``viewer`` None) or one of its agents sees them."""

    @cached_property
    def tasks(self) -> AgentTasks:
        """Collaboration tasks of the tenant's agents (the ``task/{id}`` scopes)."""
        from memoryd.continuity.tasks import AgentTasks  # continuity loads the LLM client

        return AgentTasks(self.store, self.tenant_id, self.viewer)

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return self.engine.embed(texts)

    def scoped(self, f: MemoryFilter) -> MemoryFilter:
        """``f`` as this view may see it: with the viewer of an agent's view."""
        return f if self.viewer is None else replace(f, viewer=self.viewer)

    def resolve_id(self, memory_id: Any, spaces: Sequence[str] | None = None) -> str:
        """The full id of a memory from its id or any unique prefix of it (4+ characters)."""
        where = self.readable_spaces() if spaces is None else spaces
        return resolve_id(
            "memory",
            memory_id,
            lambda prefix, n: self.store.memory_ids_like(
                self.tenant_id, where, prefix, n, self.viewer
            ),
        )

    def expand_id(self, memory_id: Any, spaces: Sequence[str] | None = None) -> str:
        """The full id of a prefix; an id that matches nothing as it is, for the caller
        to judge (batch deletes skip unknown ids; sharing looks in spaces of its own)."""
        try:
            return self.resolve_id(memory_id, spaces)
        except NotFoundError:
            return check_id(memory_id)

    def get(self, memory_id: str) -> Memory:
        """A memory of the personal space or of any space the tenant belongs to."""
        spaces = self.readable_spaces()
        memory = self.store.get(
            self.tenant_id, spaces, self.resolve_id(memory_id, spaces), self.viewer
        )
        if memory is None:
            raise NotFoundError(f"memory {memory_id}")
        return memory

    def add(
        self,
        content: str,
        *,
        key: str | None = None,
        replaces: str | None = None,
        share: bool = True,
        **fields: Any,
    ) -> Memory:
        """Store one memory now (``MemoryService.add`` says how keys and slots supersede)."""
        from memoryd.ingest.direct_add import add_direct  # the slow path's slot rules

        if self.viewer is not None or fields.get("scope") is not None:
            fields["scope"] = self.tasks.writable_scope(fields.get("scope"))
        from memoryd.tenancy.sharing import Sharing

        memory = build_direct_memory(
            content, tenant_id=self.tenant_id, space_id=self.space_id, key=key, **fields
        )
        stored = add_direct(self, memory, fields, key, replaces)
        if share and stored.id == memory.id:  # new (a repeat returns the one it repeats)
            # the space's auto-share rules, whatever door the memory came through
            Sharing(self).apply_auto_share(stored)
        return stored

    def update(self, memory_id: str, **fields: Any) -> Memory:
        """Change fields of a memory; new content is re-embedded before anything is written.

        Values equal to the current ones are no change: a call that changes
        nothing writes nothing (no history row, no new version).
        """
        from memoryd.text.conversation import embedding_text

        parsed = parse_changes(fields)
        if "scope" in parsed:
            parsed["scope"] = self.tasks.writable_scope(parsed["scope"])
        memory_id = self.resolve_id(memory_id, [self.space_id])
        current = self.store.get(self.tenant_id, [self.space_id], memory_id, self.viewer)
        if current is None:
            raise NotFoundError(f"memory {memory_id}")
        changes = {k: v for k, v in parsed.items() if getattr(current, k, None) != v}
        if not changes:
            return current
        vector = None
        if changes.keys() & VALIDITY:
            start, end = (_time(n, changes.get(n, getattr(current, n))) for n in VALIDITY)
            if start is not None and end is not None and end <= start:
                raise ValidationError("valid_to must be after valid_from")
        if "content" in changes:
            changes = {**derived_fields(current, changes["content"]), **changes}
            vector = self.embed([embedding_text(current.model_copy(update=changes))])[0]
            if "marks" not in changes and any(m.startswith(ABOUT_PREFIX) for m in current.marks):
                changes["marks"] = self._reread(current, changes["content"])
        action = f"state:{changes['state'].value}" if set(changes) == {"state"} else "update"
        return self.store.update_memory(
            self.tenant_id, [self.space_id], memory_id, changes, vector=vector, action=action
        )

    def _reread(self, memory: Memory, content: str) -> list[str]:
        """The marks of ``memory`` with what its new content is about in place of the old."""
        from memoryd.ingest.attributes import read

        reading = read([content], self, exclude=[memory.id])[0]  # read() takes a role off
        kept = [m for m in memory.marks if not m.startswith(ABOUT_PREFIX)]
        return [*kept, *reading.marks()]


def _time(name: str, value: Any) -> datetime | None:
    try:
        return parse_ts(value)
    except (ValueError, TypeError, AttributeError):
        raise ValidationError(f"{name} must be an ISO 8601 time, got {value!r}") from None
