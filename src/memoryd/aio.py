"""The SDK for asyncio agents: ``AsyncMemory`` and ``AsyncRemoteMemory``.

The same methods as :class:`memoryd.Memory` and :class:`memoryd.RemoteMemory`,
each a coroutine::

    async with AsyncMemory() as mem:
        await mem.add("I moved to Berlin in 2024", user_id="alice")
        hits = await mem.search("where does the user live", user_id="alice")

``AsyncMemory`` runs the embedded store's calls in worker threads
(``asyncio.to_thread``), so the event loop never waits for the model or
SQLite. ``AsyncRemoteMemory`` talks to a server with httpx's ``AsyncClient``
and sends exactly the requests ``RemoteMemory`` sends.
"""

from __future__ import annotations

import asyncio
import builtins
import time
from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Unpack

from memoryd.client import (
    DEFAULT_TIMEOUT_S,
    TASK_POLL_S,
    Calls,
    ServerError,
    answer,
    settings,
    write_export,
)
from memoryd.client_tasks import AsyncRemoteTasks
from memoryd.embed import Embedder
from memoryd.errors import ValidationError
from memoryd.extras import extra
from memoryd.models import IngestResult, Message, ScoredMemory, SearchResponse
from memoryd.models import Memory as MemoryRecord
from memoryd.options import (
    AddFields,
    EmbeddedAddFields,
    EmbeddedImportOptions,
    EmbeddedIngestOptions,
    EmbeddedListFilters,
    EmbeddedSearchOptions,
    ImportOptions,
    IngestOptions,
    ListFilters,
    SearchOptions,
)
from memoryd.portability import Progress
from memoryd.remote_call import Call, R
from memoryd.sdk import Memory

if TYPE_CHECKING:
    import httpx

    from memoryd.continuity.model import Checkpoint
    from memoryd.continuity.tasks import AgentTasks


class AsyncTasks:
    """Collaboration tasks for asyncio code; see :class:`memoryd.continuity.tasks.AgentTasks`."""

    def __init__(self, tasks: AgentTasks) -> None:
        self.sync = tasks

    async def create(
        self, task_id: str | None = None, title: str = ""
    ) -> tuple[dict[str, Any], bool]:
        return await asyncio.to_thread(self.sync.create, task_id, title)

    async def get(self, task_id: str) -> dict[str, Any]:
        return await asyncio.to_thread(self.sync.get, task_id)

    async def list(self, agent_id: str | None = None) -> builtins.list[dict[str, Any]]:
        return await asyncio.to_thread(self.sync.list, agent_id)

    async def join(self, task_id: str, agent_id: str | None = None) -> dict[str, Any]:
        return await asyncio.to_thread(self.sync.join, task_id, agent_id)

    async def leave(self, task_id: str, agent_id: str | None = None) -> dict[str, Any]:
        return await asyncio.to_thread(self.sync.leave, task_id, agent_id)

    async def delete(self, task_id: str) -> dict[str, Any]:
        return await asyncio.to_thread(self.sync.delete, task_id)


class AsyncMemory:
    """An embedded memory store for asyncio code; see :class:`memoryd.Memory`."""

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
        self.sync = Memory(
            path,
            user_id=user_id,
            agent_id=agent_id,
            session_id=session_id,
            embedder=embedder,
            **settings,
        )

    def as_agent(self, agent_id: str, session_id: str | None = None) -> AsyncMemory:
        """This store as one agent; see :meth:`memoryd.Memory.as_agent`."""
        view = AsyncMemory.__new__(AsyncMemory)
        view.sync = self.sync.as_agent(agent_id, session_id)
        return view

    @property
    def tasks(self) -> AsyncTasks:
        return AsyncTasks(self.sync.tasks)

    async def add(
        self, content: str, *, user_id: str | None = None, **fields: Unpack[EmbeddedAddFields]
    ) -> MemoryRecord:
        return await asyncio.to_thread(lambda: self.sync.add(content, user_id=user_id, **fields))

    async def update(self, memory_id: str, **fields: Any) -> MemoryRecord:
        return await asyncio.to_thread(self.sync.update, memory_id, **fields)

    async def delete(self, memory_id: str, **options: Any) -> None:
        await asyncio.to_thread(self.sync.delete, memory_id, **options)

    async def batch_delete(
        self, ids: Sequence[str] | None = None, confirm: bool = False, **filter_fields: Any
    ) -> dict[str, Any]:
        return await asyncio.to_thread(self.sync.batch_delete, ids, confirm, **filter_fields)

    async def delete_all(self, confirm: bool = False, **options: Any) -> dict[str, int]:
        return await asyncio.to_thread(self.sync.delete_all, confirm, **options)

    async def ingest(
        self,
        messages: Sequence[Message | dict[str, Any]],
        *,
        user_id: str | None = None,
        mode: str = "raw",
        dates: datetime | Sequence[datetime | None] | None = None,
        **options: Unpack[EmbeddedIngestOptions],
    ) -> IngestResult:
        return await asyncio.to_thread(
            lambda: self.sync.ingest(messages, user_id=user_id, mode=mode, dates=dates, **options)
        )

    async def mark_noise(self, memory_id: str, **options: Any) -> None:
        await asyncio.to_thread(self.sync.mark_noise, memory_id, **options)

    async def task(self, task_id: str, **options: Any) -> dict[str, Any]:
        return await asyncio.to_thread(self.sync.task, task_id, **options)

    async def wait_for_task(
        self, task_id: str, timeout_s: float = 60.0, **options: Any
    ) -> dict[str, Any]:
        return await _poll(lambda: self.task(task_id, **options), task_id, timeout_s)

    async def consolidate(self, *, wait: bool = True, timeout_s: float = 300.0) -> dict[str, Any]:
        task = await asyncio.to_thread(lambda: self.sync.consolidate(wait=False))
        return await self.wait_for_task(task["id"], timeout_s) if wait else task

    async def import_file(
        self,
        path: Path | str,
        *,
        user_id: str | None = None,
        **options: Unpack[EmbeddedImportOptions],
    ) -> dict[str, Any]:
        return await asyncio.to_thread(
            lambda: self.sync.import_file(path, user_id=user_id, **options)
        )

    async def import_task(self, import_id: str, **options: Any) -> dict[str, Any]:
        return await asyncio.to_thread(self.sync.import_task, import_id, **options)

    async def wait_for_import(
        self, import_id: str, timeout_s: float = 300.0, **options: Any
    ) -> dict[str, Any]:
        return await _poll(lambda: self.import_task(import_id, **options), import_id, timeout_s)

    async def rollback_import(self, import_id: str, **options: Any) -> dict[str, Any]:
        return await asyncio.to_thread(self.sync.rollback_import, import_id, **options)

    async def get(self, memory_id: str, **options: Any) -> MemoryRecord:
        return await asyncio.to_thread(self.sync.get, memory_id, **options)

    async def list(
        self, *, user_id: str | None = None, **filters: Unpack[EmbeddedListFilters]
    ) -> builtins.list[MemoryRecord]:
        return await asyncio.to_thread(lambda: self.sync.list(user_id=user_id, **filters))

    async def search(
        self, query: str, *, user_id: str | None = None, **options: Unpack[EmbeddedSearchOptions]
    ) -> builtins.list[ScoredMemory]:
        return await asyncio.to_thread(lambda: self.sync.search(query, user_id=user_id, **options))

    async def explain(
        self, query: str, *, user_id: str | None = None, **options: Unpack[EmbeddedSearchOptions]
    ) -> SearchResponse:
        return await asyncio.to_thread(lambda: self.sync.explain(query, user_id=user_id, **options))

    async def history(self, memory_id: str, **options: Any) -> builtins.list[dict[str, Any]]:
        return await asyncio.to_thread(self.sync.history, memory_id, **options)

    async def stats(self, **options: Any) -> dict[str, Any]:
        return await asyncio.to_thread(self.sync.stats, **options)

    async def profile(self, query: str | None = None, **options: Any) -> dict[str, Any]:
        return await asyncio.to_thread(self.sync.profile, query, **options)

    async def checkpoint(
        self, agent_id: str, session_id: str, events: Sequence[Any], **options: Any
    ) -> Checkpoint:
        return await asyncio.to_thread(
            self.sync.checkpoint, agent_id, session_id, events, **options
        )

    async def checkpoints(self, **filters: Any) -> builtins.list[Checkpoint]:
        return await asyncio.to_thread(self.sync.checkpoints, **filters)

    async def restore(self, agent_id: str, **options: Any) -> str:
        return await asyncio.to_thread(self.sync.restore, agent_id, **options)

    async def session_layers(self, **filters: Any) -> builtins.list[dict[str, Any]]:
        return await asyncio.to_thread(self.sync.session_layers, **filters)

    async def consolidate_sessions(self, **options: Any) -> int:
        return await asyncio.to_thread(self.sync.consolidate_sessions, **options)

    async def export(
        self, path: Path | str, progress: Progress | None = None, **options: Any
    ) -> int:
        return await asyncio.to_thread(self.sync.export, path, progress, **options)

    async def import_(
        self, path: Path | str, progress: Progress | None = None, **options: Any
    ) -> dict[str, int]:
        return await asyncio.to_thread(self.sync.import_, path, progress, **options)

    async def reindex(self, progress: Progress | None = None) -> int:
        return await asyncio.to_thread(self.sync.reindex, progress)

    async def close(self) -> None:
        await asyncio.to_thread(self.sync.close)

    async def __aenter__(self) -> AsyncMemory:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


class AsyncRemoteMemory:
    """A memoryd server for asyncio code; see :class:`memoryd.RemoteMemory`."""

    def __init__(
        self,
        url: str | None = None,
        api_key: str | None = None,
        *,
        agent_id: str | None = None,
        session_id: str | None = None,
        timeout: float = DEFAULT_TIMEOUT_S,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        with extra("remote", "AsyncRemoteMemory"):
            import httpx
        base, headers = settings(url, api_key, agent_id, session_id)
        self.agent_id = agent_id
        self._http = httpx.AsyncClient(
            base_url=base, headers=headers, timeout=timeout, transport=transport
        )

    @cached_property
    def tasks(self) -> AsyncRemoteTasks:
        """Collaboration tasks of the tenant's agents (as ``AsyncMemory.tasks``)."""
        return AsyncRemoteTasks(self._send, self.agent_id)

    async def _send(self, call: Call[R]) -> R:
        import httpx  # loaded by the constructor

        try:
            response = await self._http.request(call.method, call.path, **call.options)
        except httpx.HTTPError as exc:
            raise ServerError(f"cannot reach {self._http.base_url}: {exc}") from exc
        return answer(call, response)

    async def add(self, content: str, **fields: Unpack[AddFields]) -> MemoryRecord:
        return await self._send(Calls.add(content, fields))

    async def update(self, memory_id: str, **fields: Any) -> MemoryRecord:
        return await self._send(Calls.update(memory_id, fields))

    async def delete(self, memory_id: str) -> None:
        await self._send(Calls.delete(memory_id))

    async def batch_delete(
        self, ids: Sequence[str] | None = None, confirm: bool = False, **filter_fields: Any
    ) -> dict[str, Any]:
        return await self._send(Calls.batch_delete(ids, confirm, filter_fields))

    async def delete_all(self, confirm: bool = False) -> dict[str, int]:
        return await self._send(Calls.delete_all(confirm))

    async def ingest(
        self,
        messages: Sequence[Message | dict[str, Any]],
        *,
        mode: str = "raw",
        dates: datetime | Sequence[datetime | None] | None = None,
        **options: Unpack[IngestOptions],
    ) -> IngestResult:
        return await self._send(Calls.ingest(messages, mode, dates, options))

    async def mark_noise(self, memory_id: str) -> None:
        await self._send(Calls.mark_noise(memory_id))

    async def task(self, task_id: str) -> dict[str, Any]:
        return await self._send(Calls.task(task_id))

    async def wait_for_task(self, task_id: str, timeout_s: float = 60.0) -> dict[str, Any]:
        return await _poll(lambda: self.task(task_id), task_id, timeout_s)

    async def consolidate(self, *, wait: bool = True, timeout_s: float = 300.0) -> dict[str, Any]:
        task = await self._send(Calls.consolidate())
        return await self.wait_for_task(task["id"], timeout_s) if wait else task

    async def import_file(
        self, path: Path | str, **options: Unpack[ImportOptions]
    ) -> dict[str, Any]:
        return await self._send(Calls.import_file(path, options))

    async def import_task(self, import_id: str) -> dict[str, Any]:
        return await self._send(Calls.import_task(import_id))

    async def wait_for_import(self, import_id: str, timeout_s: float = 300.0) -> dict[str, Any]:
        return await _poll(lambda: self.import_task(import_id), import_id, timeout_s)

    async def rollback_import(self, import_id: str) -> dict[str, Any]:
        return await self._send(Calls.rollback_import(import_id))

    async def get(self, memory_id: str) -> MemoryRecord:
        return await self._send(Calls.get(memory_id))

    async def list(self, **filters: Unpack[ListFilters]) -> builtins.list[MemoryRecord]:
        return await self._send(Calls.list(filters))

    async def search(
        self, query: str, **options: Unpack[SearchOptions]
    ) -> builtins.list[ScoredMemory]:
        return (await self._send(Calls.search(query, options))).results

    async def explain(self, query: str, **options: Unpack[SearchOptions]) -> SearchResponse:
        return await self._send(Calls.search(query, {**options, "include_trace": True}))

    async def history(self, memory_id: str) -> builtins.list[dict[str, Any]]:
        return await self._send(Calls.history(memory_id))

    async def stats(self) -> dict[str, Any]:
        return await self._send(Calls.stats())

    async def profile(self, query: str | None = None) -> dict[str, Any]:
        return await self._send(Calls.profile(query))

    async def export(self, path: Path | str, progress: Progress | None = None) -> int:
        return write_export(path, await self._send(Calls.export()), progress)

    async def import_(self, path: Path | str, progress: Progress | None = None) -> dict[str, int]:
        result = await self._send(Calls.import_(path))
        if progress:
            progress(result.get("imported", 0))
        return result

    async def close(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncRemoteMemory:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


async def _poll(
    get: Callable[[], Awaitable[dict[str, Any]]], task_id: str, timeout_s: float
) -> dict[str, Any]:
    """A task once it completed or failed, polled without blocking the event loop."""
    deadline = time.monotonic() + timeout_s
    while True:
        task = await get()
        if task["status"] in ("completed", "failed"):
            return task
        if time.monotonic() > deadline:
            raise ValidationError(f"task {task_id} is still {task['status']}")
        await asyncio.sleep(TASK_POLL_S)
