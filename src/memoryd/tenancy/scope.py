"""One tenant's reach into an engine: its personal space and the spaces it belongs to.

Spaces, sharing and stats each start from here. They take the engine and a
tenant id, never a ``MemoryService``, so the façade is built on them and
never the other way round.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, overload

from memoryd.engine import Engine
from memoryd.errors import NotFoundError, ValidationError
from memoryd.models import Memory, normalise_space_id, personal_space
from memoryd.retrieve import SpaceRef
from memoryd.store.scopes import Viewer
from memoryd.validate import check_id


class Scoped(Protocol):
    """Anything that holds an engine and serves one tenant (a ``MemoryService`` does)."""

    @property
    def engine(self) -> Engine: ...

    @property
    def tenant_id(self) -> str: ...


class TenantScope:
    """The tenant as its owner (``viewer`` None), or as one of its agents: then every read
    sees only that agent's scopes (memoryd.store.scopes)."""

    @overload
    def __init__(self, engine: Engine, tenant_id: str, viewer: Viewer | None = None) -> None: ...

    @overload
    def __init__(self, engine: Scoped) -> None: ...

    def __init__(
        self, engine: Engine | Scoped, tenant_id: str | None = None, viewer: Viewer | None = None
    ) -> None:
        if isinstance(engine, Engine):
            assert tenant_id is not None
            self.engine, self.me = engine, tenant_id
        else:  # a stage that holds a service passes it whole: its engine and tenant are taken
            self.engine, self.me = engine.engine, engine.tenant_id
        self.viewer = viewer
        self.store = self.engine.store
        self.space_id = personal_space(self.me)

    @property
    def tenant_id(self) -> str:
        return self.me

    def readable_spaces(self) -> list[str]:
        """Every space the tenant is a member of (pending invitations are not membership)."""
        return [space_id for space_id, _ in self.store.space_refs(self.me)]

    def get(self, memory_id: str) -> Memory:
        """A memory of the personal space or of any space the tenant belongs to."""
        memory = self.store.get(self.me, self.readable_spaces(), check_id(memory_id), self.viewer)
        if memory is None:
            raise NotFoundError(f"memory {memory_id}")
        return memory

    def space_refs(self, spaces: str | Sequence[str] | None) -> list[SpaceRef]:
        """The spaces a request names: ``None``, ``""`` or ``"all"`` for every one of the
        tenant's; else ids (comma-separated or a list), each one the tenant belongs to."""
        mine = self.store.space_refs(self.me)
        if spaces is None or spaces in ("", "all") or spaces == ["all"]:
            return [SpaceRef(space_id, kind) for space_id, kind in mine]
        wanted = [s.strip() for s in spaces.split(",")] if isinstance(spaces, str) else spaces
        kinds = dict(mine)
        refs = []
        for space_id in dict.fromkeys(normalise_space_id(w) for w in wanted if w):
            if space_id not in kinds:
                raise NotFoundError(f"space {space_id}")
            refs.append(SpaceRef(space_id, kinds[space_id]))
        if not refs:
            raise ValidationError("space must be 'all' or a comma-separated list of space ids")
        return refs
