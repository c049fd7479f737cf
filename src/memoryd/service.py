"""MemoryService: the one façade every door (SDK, CLI, REST, MCP, hooks) calls.

Business rules live here and in the stage modules it calls; the doors only
translate. Every method works inside one tenant and its spaces, so scoping
is never a door's job. The stages never take the façade back: they take the
engine and the tenant (``TenantMemories`` for reading and writing memories
one at a time, ``TenantScope`` for spaces, sharing and stats), so this module
is built on them and not the other way round.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from datetime import datetime
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memoryd.config import Settings, load_settings
from memoryd.engine import Engine
from memoryd.errors import ForbiddenError, NotFoundError, ValidationError
from memoryd.ids import resolve_id
from memoryd.ingest.memories import TenantMemories
from memoryd.jobs.worker import TaskWorker, wait_until_done
from memoryd.models import (
    Category,
    IngestResult,
    Memory,
    MemoryType,
    Message,
    SearchResponse,
    State,
    Tier,
    personal_space,
    utcnow,
)
from memoryd.retrieve.config import DEFAULT_LIMIT, DEFAULT_RECIPE, SearchConfig
from memoryd.store import MemoryFilter
from memoryd.store.rows import to_us
from memoryd.store.scopes import Viewer, normalize_scope
from memoryd.users import LOCAL_TENANT as LOCAL_TENANT
from memoryd.users import user_tenant
from memoryd.validate import check_int, check_tags, check_time, check_unit, parse_enum

if TYPE_CHECKING:
    # loaded by the methods that need them: a command that only reads (memoryd list,
    # get, stats, forget) starts without NumPy, the model, or the retrieval stages
    import numpy as np
    import numpy.typing as npt

    from memoryd.continuity.tasks import AgentTasks
    from memoryd.embed import Embedder
    from memoryd.retrieve import Retriever
    from memoryd.tenancy.sharing import Sharing
    from memoryd.tenancy.spaces import Spaces

log = logging.getLogger(__name__)

MAX_LIMIT = 1000
MAX_OFFSET = 10**12
TASK_POLL_S = 0.05
Progress = Callable[[int, int], None]


class MemoryService:
    """One tenant's view of an engine. ``for_tenant`` gives another tenant's view,
    ``for_agent`` the view of one of its agents (which sees only its scopes)."""

    def __init__(
        self,
        home: Path | str | None = None,
        *,
        settings: Settings | None = None,
        embedder: Embedder | None = None,
        tenant_id: str = LOCAL_TENANT,
        engine: Engine | None = None,
        viewer: Viewer | None = None,
    ) -> None:
        self._owns_engine = engine is None
        self.engine = engine or Engine(settings or load_settings(home), embedder)
        self.settings = self.engine.settings
        self.home = self.engine.home
        self.store = self.engine.store
        self.tenant_id = tenant_id
        self.space_id = personal_space(tenant_id)
        self.memories = TenantMemories(self.engine, tenant_id, viewer)
        if self._owns_engine:  # a view of a shared engine serves a tenant that exists
            self.store.ensure_tenant(tenant_id, tenant_id, self.space_id)

    def for_tenant(self, tenant_id: str) -> MemoryService:
        """The same engine seen as another tenant (the server's per-request service)."""
        return MemoryService(tenant_id=tenant_id, engine=self.engine)

    def for_agent(self, agent_id: str, session_id: str | None = None) -> MemoryService:
        """The same tenant as one of its agents, in ``session_id``: every read of the view
        sees global, the agent's tasks, its agent scope and that session only, and every
        write goes into one of those (memoryd.store.scopes)."""
        return MemoryService(
            tenant_id=self.tenant_id, engine=self.engine, viewer=Viewer.of(agent_id, session_id)
        )

    @property
    def viewer(self) -> Viewer | None:
        """The agent this view acts as (memoryd.store.scopes); None: the owner, every scope."""
        return self.memories.viewer

    @property
    def tasks(self) -> AgentTasks:
        """Collaboration tasks of the tenant's agents (the ``task/{id}`` scopes)."""
        return self.memories.tasks

    def scoped(self, f: MemoryFilter) -> MemoryFilter:
        """``f`` as this view may see it: with the viewer of an agent's view."""
        return self.memories.scoped(f)

    @cached_property
    def spaces(self) -> Spaces:
        """Spaces, members, invitations and auto-share rules, as this tenant."""
        from memoryd.tenancy.spaces import Spaces

        return Spaces(self.engine, self.tenant_id)

    @cached_property
    def sharing(self) -> Sharing:
        """Copies between spaces, as this tenant."""
        from memoryd.tenancy.sharing import Sharing

        return Sharing(self.engine, self.tenant_id)

    def for_user(self, user_id: str) -> MemoryService:
        """The same engine seen as a user's tenant, made on first use (see memoryd.users)."""
        tenant_id = user_tenant(user_id)
        self.store.ensure_tenant(tenant_id, user_id, personal_space(tenant_id))
        return self.for_tenant(tenant_id)

    @property
    def embedder(self) -> Embedder:
        return self.engine.embedder

    @property
    def retriever(self) -> Retriever:
        return self.engine.retriever

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return self.engine.embed(texts)

    def close(self) -> None:
        if self._owns_engine:
            self.engine.close()

    def __enter__(self) -> MemoryService:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ direct memories
    def add(
        self,
        content: str,
        *,
        key: str | None = None,
        replaces: str | None = None,
        share: bool = True,
        **fields: Any,
    ) -> Memory:
        """Store one memory now.

        With ``key``, the new memory supersedes the one holding that key (which
        stays reachable ``as_of`` its time). A direct memory that changes a known
        fact supersedes it too, with history: the memory named by ``replaces``,
        or else the one whose slot its words fill ("I live in Munich" after "I
        live in Berlin"). Content already held by a direct memory (or by the
        key) is a repeat: that memory is returned, recalled once more. A new
        memory is copied into the spaces whose auto-share rules watch it, unless
        ``share`` is False (memoryd's own probes).
        """
        return self.memories.add(content, key=key, replaces=replaces, share=share, **fields)

    def resolve_id(self, memory_id: Any, spaces: Sequence[str] | None = None) -> str:
        """The full id of a memory from its id or any unique prefix of it (4+ characters)."""
        return self.memories.resolve_id(memory_id, spaces)

    def get(self, memory_id: str) -> Memory:
        """A memory of the personal space or of any space the tenant belongs to."""
        return self.memories.get(memory_id)

    def update(self, memory_id: str, **fields: Any) -> Memory:
        """Change fields of a memory; new content is re-embedded before anything is written.

        Values equal to the current ones are no change: a call that changes
        nothing writes nothing (no history row, no new version).
        """
        return self.memories.update(memory_id, **fields)

    def delete(self, memory_id: str) -> None:
        """Soft delete: the row and its history stay; search and lists stop showing it.

        Only memories of the personal space: a copy in a team space is withdrawn
        by unsharing it, so one member cannot delete what the space holds.
        """
        memory_id = self.resolve_id(memory_id, [self.space_id])
        self.store.set_state_where(
            self.tenant_id,
            [self.space_id],
            self.scoped(MemoryFilter(ids=[memory_id])),
            State.DELETED,
        )

    def batch_delete(
        self,
        ids: Sequence[str] | None = None,
        filter: MemoryFilter | None = None,
        confirm: bool = False,
    ) -> dict[str, Any]:
        """By ids (unknown ones skipped), or by filter: a dry run unless ``confirm``."""
        if ids:
            found = self.scoped(MemoryFilter(ids=[self.expand_id(i, [self.space_id]) for i in ids]))
            n = self.store.set_state_where(self.tenant_id, [self.space_id], found, State.DELETED)
            return {"deleted": n, "mode": "ids"}
        if filter is None:
            raise ValidationError("provide either memory_ids or filter")
        filter = self.scoped(filter)
        if not confirm:
            return {"would_delete": self.store.count(self.tenant_id, [self.space_id], filter)}
        n = self.store.set_state_where(self.tenant_id, [self.space_id], filter, State.DELETED)
        return {"deleted": n, "mode": "filter"}

    def expand_id(self, memory_id: Any, spaces: Sequence[str] | None = None) -> str:
        """The full id of a prefix; an id that matches nothing as it is, for the caller
        to judge (batch deletes skip unknown ids; sharing looks in spaces of its own)."""
        return self.memories.expand_id(memory_id, spaces)

    def delete_all(self, confirm: bool = False) -> dict[str, int]:
        """Everything in the personal space; refused without ``confirm``."""
        if not confirm:
            raise ValidationError("delete-all needs explicit confirmation")
        if self.viewer is not None:  # it clears every agent's sessions and checkpoints too
            raise ForbiddenError("delete-all is the owner's: send it without an agent identity")
        n = self.store.set_state_where(
            self.tenant_id, [self.space_id], MemoryFilter(), State.DELETED
        )
        with self.store.write() as conn:
            cleared = self.store.clear_sessions(conn, self.tenant_id, self.space_id)
            # session checkpoints and layers hold the conversation too (memoryd.continuity)
            cleared += self.store.clear_continuity(conn, self.tenant_id)
        return {"deleted": n, "sessions_cleared": cleared}

    def list_memories(
        self,
        *,
        limit: int = DEFAULT_LIMIT,
        offset: int = 0,
        sort: str = "created_at",
        order: str = "desc",
        memory_type: str | MemoryType | None = None,
        state: str | State | None = None,
        category: str | Category | None = None,
        tier: str | Tier | None = None,
        tags: Any = None,
        session_id: str | None = None,
        agent_id: str | None = None,
        space_id: str | None = None,
        scope: str | None = None,
        current: bool = False,
    ) -> tuple[list[Memory], int]:
        """Memories by the reference's list filters. Session turns only when asked for.

        The personal space unless ``space_id`` names another space of the caller's.
        ``current`` keeps only what holds now (``Status.CURRENT``): what a door
        that shows the user's facts as true may show.
        """
        check_int("limit", limit, 0, MAX_LIMIT)
        check_int("offset", offset, 0, MAX_OFFSET)
        f = MemoryFilter(
            memory_type=[parse_enum(MemoryType, memory_type)] if memory_type else None,
            state=[parse_enum(State, state)] if state else None,
            category=[parse_enum(Category, category)] if category else None,
            tier=[parse_enum(Tier, tier)] if tier else None,
            tags=check_tags(tags, most=None) or None,
            session_id=session_id,
            agent_id=agent_id,
            scope=normalize_scope(scope),
            exclude_types=() if memory_type else (MemoryType.SESSION,),
            live_at=utcnow() if current else None,
            viewer=self.viewer,
        )
        space = self.spaces.visible(space_id).id if space_id else self.space_id
        return self.store.list_memories(
            self.tenant_id, [space], f, sort=sort, order=order, limit=limit, offset=offset
        )

    def history(self, memory_id: str) -> list[dict[str, Any]]:
        return self.store.history(self.get(memory_id).id)

    # ------------------------------------------------------------------ search
    def search(
        self,
        query: str,
        *,
        limit: int = DEFAULT_LIMIT,
        min_score: float | None = None,
        min_similarity: float | None = None,
        scope: str | None = None,
        tags: Any = None,
        source: str | None = None,
        agent_id: str | None = None,
        category: str | Category | None = None,
        memory_type: str | MemoryType | None = None,
        session_id: str | None = None,
        exclude_session: str | None = None,
        include_tool_output: bool = False,
        created_after: datetime | str | None = None,
        created_before: datetime | str | None = None,
        as_of: datetime | str | None = None,
        now: datetime | str | None = None,
        include_trace: bool = False,
        config: SearchConfig = DEFAULT_RECIPE,
        touch: bool = True,
        spaces: str | Sequence[str] | None = None,
    ) -> SearchResponse:
        """Hybrid search over the active memories valid now (or at ``as_of``).

        ``min_score`` is relative (stage 4, before decay and the other weights);
        ``min_similarity`` drops results whose cosine similarity to the query is lower.

        ``spaces`` is ``"all"`` (the default: every space the tenant belongs
        to), or space ids, comma-separated or as a list; each space is searched
        on its own and the results merged by the space weights.

        ``exclude_session`` names the conversation the search recalls for: its
        turns are in the agent's context already and are left out. Turns that
        are tool output are found only with ``include_tool_output``.
        """
        if not isinstance(query, str):
            raise ValidationError("the query must be text")
        if not query.strip():
            raise ValidationError("the query is empty: give the words to search for")
        check_int("limit", limit, 1, MAX_LIMIT)
        if min_score is not None:
            min_score = check_unit("min_score", min_score, 0.0)
        now = check_time("now", now) or utcnow()
        f = MemoryFilter(
            scope=normalize_scope(scope),
            tags=check_tags(tags, most=None) or None,
            source=source or None,
            agent_id=agent_id or None,
            session_id=session_id,
            not_session_id=exclude_session or None,
            without_tool_output=not include_tool_output,
            category=[parse_enum(Category, category)] if category else None,
            memory_type=[parse_enum(MemoryType, memory_type)] if memory_type else None,
            created_after=check_time("created_after", created_after),
            created_before=check_time("created_before", created_before),
            as_of=check_time("as_of", as_of),
            live_at=now,
            viewer=self.viewer,
        )
        from memoryd.retrieve import SearchRequest

        request = SearchRequest(
            query=query,
            limit=limit,
            filter=f,
            now=now,
            min_score=min_score,
            include_trace=include_trace,
            config=config,
        )
        response = self.retriever.search(self.tenant_id, self.spaces.space_refs(spaces), request)
        if min_similarity is not None:  # absolute: applied to the ranked results, last
            floor = check_unit("min_similarity", min_similarity, 0.0)
            response.results = [
                r for r in response.results if r.similarity is None or r.similarity >= floor
            ]
        if touch and response.results:
            self.engine.touch([r.memory.id for r in response.results], to_us(utcnow()) or 0)
        return response

    # ------------------------------------------------------------------ conversation capture
    def ingest(
        self,
        messages: Sequence[Message | dict[str, Any]],
        *,
        session_id: str | None = None,
        agent_id: str | None = None,
        mode: str = "raw",
        dates: datetime | Sequence[datetime | None] | None = None,
        tags: Any = None,
        source: str | None = None,
        defer_embedding: bool = False,
    ) -> IngestResult:
        """Store messages durably and make each turn searchable (the fast path).

        ``mode="smart"`` also queues the slow path that distils them (see
        :mod:`memoryd.ingest.capture`). ``defer_embedding`` returns once the
        turns are durable; their vectors follow from the engine's embed queue.
        """
        from memoryd.ingest.capture import capture

        return capture(
            self.memories,
            messages,
            session_id=session_id,
            agent_id=agent_id,
            mode=mode,
            dates=dates,
            tags=tags,
            source=source,
            defer_embedding=defer_embedding,
        )

    def start_worker(self) -> TaskWorker:
        """The background worker that runs smart-ingest tasks (resuming unfinished ones)."""
        from memoryd.ingest.smart import start_smart_worker

        return start_smart_worker(self.engine)

    def mark_noise(self, memory_id: str) -> None:
        """Teach the noise filter: this memory was chatter. It is deleted and its vector kept."""
        memory_id = self.resolve_id(memory_id, [self.space_id])
        memory = self.store.get(self.tenant_id, [self.space_id], memory_id, self.viewer)
        if memory is None:
            raise NotFoundError(f"memory {memory_id}")
        vector = self.store.get_vector(memory.id)
        if vector is not None:
            self.store.add_learned_noise(
                self.tenant_id, self.space_id, memory.id, memory.content, vector
            )
        self.delete(memory.id)

    def wait_for_task(self, task_id: str, timeout_s: float = 60.0) -> dict[str, Any]:
        """The task once it completed or failed; a ValidationError if it takes longer."""
        return wait_until_done(self.task, task_id, timeout_s, TASK_POLL_S)

    def task(self, task_id: str) -> dict[str, Any]:
        """The status of a background task (a conversation ingest) of this tenant."""
        task_id = resolve_id(
            "task",
            task_id,
            lambda prefix, n: self.store.ids_with_prefix(
                "tasks", "id", prefix, "tenant_id = ?", [self.tenant_id], n
            ),
        )
        task = self.store.get_task(self.tenant_id, task_id)
        if task is None:
            raise NotFoundError(f"task {task_id}")
        return task

    def consolidate(self) -> dict[str, Any]:
        """Queue a consolidation of this tenant's memories; its task (see ingest.consolidate)."""
        from memoryd.ingest.consolidate import queue_consolidation

        return self.task(queue_consolidation(self.engine, self.tenant_id))

    def session_messages(self, session_id: str | None = None) -> list[dict[str, Any]]:
        return self.store.session_messages(self.tenant_id, self.space_id, session_id)

    def sessions(
        self, limit: int = DEFAULT_LIMIT, offset: int = 0
    ) -> tuple[list[dict[str, Any]], int]:
        """The stored conversations, latest first (id, agent, turns, first and last time)."""
        check_int("limit", limit, 1, MAX_LIMIT)
        check_int("offset", offset, 0, MAX_OFFSET)
        return self.store.list_sessions(self.tenant_id, self.space_id, limit, offset)

    def session_tasks(self, session_id: str) -> list[dict[str, Any]]:
        """What ingest did with a conversation: each task's counts, decisions and errors."""
        return [self.task(t) for t in self.store.session_task_ids(self.tenant_id, session_id)]

    # ------------------------------------------------------------------ stats
    def stats(self) -> dict[str, Any]:
        """The counts of ``GET /v1/stats`` over the tenant's spaces, the model and the home."""
        from memoryd.stats import Stats

        return {
            **Stats(self.engine, self.tenant_id, self.viewer).overview(),
            "embedding_model": self.store.get_meta("embed_model"),
            "home": str(self.home),
        }
