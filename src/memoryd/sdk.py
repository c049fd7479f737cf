"""The public Python API: ``Memory(path)`` is an embedded memory store.

from memoryd import Memory
mem = Memory()                      # the default home, the one the CLI uses
mem.add("I moved to Berlin in 2024")
mem.search("where does the user live")[0].memory.content

Every method takes ``user_id=`` (or the instance's default, ``Memory(user_id=…)``):
each user is a tenant of the home with memories of its own (:mod:`memoryd.users`).
``Memory(agent_id=…, session_id=…)`` or ``mem.as_agent(…)`` acts as one agent of
that user, which sees and writes only its scopes (docs/continuity.md).
Wrong arguments raise :class:`memoryd.ValidationError`, never a bare ``TypeError``.
"""

from __future__ import annotations

import builtins
import copy
import inspect
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Unpack

from memoryd.embed import Embedder
from memoryd.ingest.direct import build_direct_memory
from memoryd.jobs.worker import wait_until_done
from memoryd.models import IngestResult, Message, ScoredMemory, SearchResponse, wire
from memoryd.models import Memory as MemoryRecord
from memoryd.options import (
    EmbeddedAddFields,
    EmbeddedImportOptions,
    EmbeddedIngestOptions,
    EmbeddedListFilters,
    EmbeddedSearchOptions,
    check_options,
)
from memoryd.portability import Progress, export_jsonl, import_jsonl, reindex
from memoryd.service import TASK_POLL_S, MemoryService
from memoryd.store.filters import MemoryFilter
from memoryd.store.scopes import Viewer

if TYPE_CHECKING:
    from memoryd.continuity.model import Checkpoint
    from memoryd.continuity.tasks import AgentTasks

# what a direct add may set: build_direct_memory's keywords, less what the store decides,
# and the memory it replaces (MemoryService.add)
_ADD_FIELDS = (
    frozenset(inspect.signature(build_direct_memory).parameters)
    - {"content", "tenant_id", "space_id"}
) | {"replaces"}


def _wired(found: dict[str, Any]) -> dict[str, Any]:
    """A dict as ``RemoteMemory`` gets it from REST: times as ISO 8601 text, enums as
    values, so code moves between the two by changing one line (and ``json.dumps`` it)."""
    out: dict[str, Any] = wire(found)
    return out


class Memory:
    """An embedded memory store in a home directory (default: the CLI's, see ``memoryd --help``)."""

    def __init__(
        self,
        path: Path | str | None = None,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        session_id: str | None = None,
        embedder: Embedder | None = None,
        **settings: Any,
    ) -> None:
        """``settings`` override the configured ones; ``embedder`` replaces the configured model.

        ``user_id`` is the user every call acts for unless it names another;
        ``agent_id`` (and ``session_id``) the agent of that user every call acts as.
        """
        from memoryd.config import load_settings

        self.service = MemoryService(settings=load_settings(path, **settings), embedder=embedder)
        self._users: dict[str, MemoryService] = {}
        self.user_id = user_id
        self.viewer: Viewer | None = None
        self._view = False  # a view made by as_agent: the engine is its origin's to close
        if agent_id is not None:
            self.viewer = Viewer.of(agent_id, session_id)
        if user_id is not None:
            self._as(user_id)  # a bad id fails here, not on the first call

    def as_agent(self, agent_id: str, session_id: str | None = None) -> Memory:
        """This store as one agent (in ``session_id``): it sees global, its tasks, its own
        agent scope and that session, and writes only into those. Closing the view leaves
        the store open."""
        view = copy.copy(self)
        view.viewer = Viewer.of(agent_id, session_id)
        view._view = True
        return view

    def _as(self, user_id: str | None) -> MemoryService:
        """The service for ``user_id`` (the instance's default user when None)."""
        user = self.user_id if user_id is None else user_id
        if user is None:
            service = self.service
        else:
            if user not in self._users:
                self._users[user] = self.service.for_user(user)
            service = self._users[user]
        if self.viewer is None:
            return service
        return service.for_agent(self.viewer.agent_id, self.viewer.session_id)

    @property
    def tasks(self) -> AgentTasks:
        """Collaboration tasks of the user's agents: ``create``, ``list``, ``join``, ``leave``
        (an agent's view joins and leaves for itself)."""
        return self._as(None).tasks

    # writes
    def add(
        self, content: str, *, user_id: str | None = None, **fields: Unpack[EmbeddedAddFields]
    ) -> MemoryRecord:
        """Remember ``content`` now; the same content again returns the memory that holds it."""
        check_options("add", fields, _ADD_FIELDS)
        return self._as(user_id).add(content, **fields)

    def update(self, memory_id: str, *, user_id: str | None = None, **fields: Any) -> MemoryRecord:
        return self._as(user_id).update(memory_id, **fields)

    def delete(self, memory_id: str, *, user_id: str | None = None) -> None:
        self._as(user_id).delete(memory_id)

    def batch_delete(
        self,
        ids: Sequence[str] | None = None,
        confirm: bool = False,
        *,
        user_id: str | None = None,
        **filter_fields: Any,
    ) -> dict[str, Any]:
        check_options("batch_delete", filter_fields, MemoryFilter)
        f = MemoryFilter(**filter_fields) if filter_fields else None
        return _wired(self._as(user_id).batch_delete(ids=ids, filter=f, confirm=confirm))

    def delete_all(self, confirm: bool = False, *, user_id: str | None = None) -> dict[str, int]:
        return self._as(user_id).delete_all(confirm=confirm)

    def ingest(
        self,
        messages: Sequence[Message | dict[str, Any]],
        *,
        user_id: str | None = None,
        mode: str = "raw",
        dates: datetime | Sequence[datetime | None] | None = None,
        **options: Unpack[EmbeddedIngestOptions],
    ) -> IngestResult:
        check_options("ingest", options, MemoryService.ingest)
        return self._as(user_id).ingest(messages, mode=mode, dates=dates, **options)

    def mark_noise(self, memory_id: str, *, user_id: str | None = None) -> None:
        """Delete a memory that is chatter and teach the noise filter to drop its like."""
        self._as(user_id).mark_noise(memory_id)

    def task(self, task_id: str, *, user_id: str | None = None) -> dict[str, Any]:
        """The status of an ingest task (smart ones run in the background)."""
        return _wired(self._as(user_id).task(task_id))

    def wait_for_task(
        self, task_id: str, timeout_s: float = 60.0, *, user_id: str | None = None
    ) -> dict[str, Any]:
        return _wired(self._as(user_id).wait_for_task(task_id, timeout_s))

    def consolidate(
        self, *, wait: bool = True, timeout_s: float = 300.0, user_id: str | None = None
    ) -> dict[str, Any]:
        """Merge duplicates and retire superseded facts, with history; the task.

        It runs in the background; ``wait`` returns it finished.
        """
        svc = self._as(user_id)
        task = svc.consolidate()
        return _wired(svc.wait_for_task(task["id"], timeout_s) if wait else task)

    # file import
    def import_file(
        self,
        path: Path | str,
        *,
        user_id: str | None = None,
        **options: Unpack[EmbeddedImportOptions],
    ) -> dict[str, Any]:
        """Queue the import of a file (text, Markdown, PDF, chat export); its ImportTask.

        ``options``: strategy, file_type, post_process, force, agent_id.
        """
        from memoryd.imports.service import Imports, read_upload

        svc = self._as(user_id)
        check_options("import_file", options, Imports.create)
        data, name = read_upload(path, svc.settings.max_import_bytes)
        return _wired(Imports(svc).create(data, name, **options))

    def import_task(self, import_id: str, *, user_id: str | None = None) -> dict[str, Any]:
        from memoryd.imports.service import Imports

        return _wired(Imports(self._as(user_id)).get(import_id))

    def wait_for_import(
        self, import_id: str, timeout_s: float = 300.0, *, user_id: str | None = None
    ) -> dict[str, Any]:
        return wait_until_done(
            lambda i: self.import_task(i, user_id=user_id), import_id, timeout_s, TASK_POLL_S
        )

    def rollback_import(self, import_id: str, *, user_id: str | None = None) -> dict[str, Any]:
        """Remove what an import created and restore what it changed."""
        from memoryd.imports.service import Imports

        return _wired(Imports(self._as(user_id)).rollback(import_id))

    # reads
    def get(self, memory_id: str, *, user_id: str | None = None) -> MemoryRecord:
        return self._as(user_id).get(memory_id)

    def list(
        self, *, user_id: str | None = None, **filters: Unpack[EmbeddedListFilters]
    ) -> builtins.list[MemoryRecord]:
        check_options("list", filters, MemoryService.list_memories)
        return self._as(user_id).list_memories(**filters)[0]

    def search(
        self, query: str, *, user_id: str | None = None, **options: Unpack[EmbeddedSearchOptions]
    ) -> builtins.list[ScoredMemory]:
        check_options("search", options, MemoryService.search)
        return self._as(user_id).search(query, **options).results

    def explain(
        self, query: str, *, user_id: str | None = None, **options: Unpack[EmbeddedSearchOptions]
    ) -> SearchResponse:
        """Search with the per-stage trace."""
        check_options("explain", options, MemoryService.search)
        options["include_trace"] = True
        return self._as(user_id).search(query, **options)

    def history(
        self, memory_id: str, *, user_id: str | None = None
    ) -> builtins.list[dict[str, Any]]:
        return [_wired(row) for row in self._as(user_id).history(memory_id)]

    def stats(self, *, user_id: str | None = None) -> dict[str, Any]:
        return _wired(self._as(user_id).stats())

    def profile(self, query: str | None = None, *, user_id: str | None = None) -> dict[str, Any]:
        """The synthesized user profile: stable facts and recent context (reference §4.11)."""
        from memoryd.profile import build_profile

        return _wired(build_profile(self._as(user_id), query))

    # session continuity (memoryd.continuity)
    def checkpoint(
        self,
        agent_id: str,
        session_id: str,
        events: Sequence[Any],
        *,
        project: str = "",
        trigger: str = "manual",
        summarize: bool = True,
        user_id: str | None = None,
    ) -> Checkpoint:
        """Fold ``events`` (messages ``{"role", "content"}``, tool calls ``{"tool",
        "arguments", "success"}``) into the session's checkpoint and save it."""
        from memoryd.continuity import Continuity, Owner

        return Continuity(self._as(user_id)).save(
            Owner(agent_id, session_id, project), events, trigger=trigger, summarize_now=summarize
        )

    def checkpoints(
        self,
        *,
        agent_id: str | None = None,
        session_id: str | None = None,
        project: str | None = None,
        limit: int = 20,
        user_id: str | None = None,
    ) -> builtins.list[Checkpoint]:
        """Saved checkpoints, newest first."""
        from memoryd.continuity import Continuity

        return Continuity(self._as(user_id), llm=None).list(
            agent_id=agent_id, session_id=session_id, project=project, limit=limit
        )

    def restore(
        self, agent_id: str, *, project: str | None = None, user_id: str | None = None
    ) -> str:
        """The agent's newest checkpoint in ``project``, rendered for a new session (or ``""``)."""
        from memoryd.continuity import Continuity

        return Continuity(self._as(user_id), llm=None).restore(agent_id, project)

    def session_layers(
        self,
        *,
        agent_id: str | None = None,
        session_id: str | None = None,
        user_id: str | None = None,
    ) -> builtins.list[dict[str, Any]]:
        """The sessions' summary layers (D5 exchanges, D2 outline, D1 gist, D0 themes), as
        ``GET /v1/session-layers`` answers them: times as ISO 8601 text, like every dict
        the SDK hands back."""
        from memoryd.continuity.layers import SessionLayers

        layers = SessionLayers(self._as(user_id), llm=None).layers(agent_id, session_id)
        return [_wired(layer) for layer in layers]

    def consolidate_sessions(self, *, idle_s: float = 0.0, user_id: str | None = None) -> int:
        """Condense every session quiet for ``idle_s`` seconds into D2/D1/D0 (resumable)."""
        from memoryd.continuity.layers import SessionLayers

        return SessionLayers(self._as(user_id)).consolidate_pending(idle_s)

    # portability
    def export(
        self, path: Path | str, progress: Progress | None = None, *, user_id: str | None = None
    ) -> int:
        with Path(path).open("w", encoding="utf-8") as out:
            return export_jsonl(self._as(user_id), out, progress)

    def import_(
        self, path: Path | str, progress: Progress | None = None, *, user_id: str | None = None
    ) -> dict[str, int]:
        with Path(path).open(encoding="utf-8") as lines:
            return import_jsonl(self._as(user_id), lines, progress)

    def reindex(self, progress: Progress | None = None) -> int:
        return reindex(self.service, progress)

    def close(self) -> None:
        if not self._view:
            self.service.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
