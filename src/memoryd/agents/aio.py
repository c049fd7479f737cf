"""``AsyncMemoryManager``: the same lifecycle for asyncio agents.

Each hook runs the synchronous manager's in a worker thread, so the event
loop never waits for the model, SQLite or the network.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

from memoryd.agents.manager import MemoryManager
from memoryd.agents.providers.base import FLUSH_TIMEOUT_S, MemoryHit
from memoryd.agents.reflect import Reflection


class AsyncMemoryManager:
    """Takes :class:`MemoryManager`'s arguments; ``sync`` is the manager underneath."""

    def __init__(self, profile: str | None = None, **options: Any) -> None:
        self.sync = MemoryManager(profile, **options)

    @property
    def session_id(self) -> str:
        return self.sync.session_id

    async def prefetch(self, query: str, session_id: str | None = None) -> str:
        return await asyncio.to_thread(self.sync.prefetch, query, session_id)

    async def queue_prefetch(self, query: str, session_id: str | None = None) -> None:
        self.sync.queue_prefetch(query, session_id)  # only submits to the manager's thread

    async def on_turn_complete(
        self, user: str, assistant: str, session_id: str | None = None
    ) -> None:
        await asyncio.to_thread(self.sync.on_turn_complete, user, assistant, session_id)

    async def on_pre_compact(
        self, messages: Sequence[Mapping[str, Any]], session_id: str | None = None
    ) -> int:
        return await asyncio.to_thread(self.sync.on_pre_compact, messages, session_id)

    async def capture(
        self, messages: Sequence[Mapping[str, Any]], session_id: str | None = None
    ) -> int:
        return await asyncio.to_thread(self.sync.capture, messages, session_id)

    async def on_session_end(
        self, messages: Sequence[Mapping[str, Any]] = (), session_id: str | None = None
    ) -> None:
        await asyncio.to_thread(self.sync.on_session_end, messages, session_id)

    async def on_memory_write(
        self, action: str, target: str, content: str, *, old_content: str | None = None
    ) -> MemoryHit | None:
        return await asyncio.to_thread(
            lambda: self.sync.on_memory_write(action, target, content, old_content=old_content)
        )

    async def search(self, query: str, limit: int = 5) -> list[MemoryHit]:
        return await asyncio.to_thread(self.sync.search, query, limit)

    async def remember(self, content: str, *, tags: Sequence[str] = ()) -> MemoryHit:
        return await asyncio.to_thread(lambda: self.sync.remember(content, tags=tags))

    async def forget(self, memory_id: str) -> None:
        await asyncio.to_thread(self.sync.forget, memory_id)

    async def reflect(self, query: str, limit: int = 10) -> Reflection:
        return await asyncio.to_thread(self.sync.reflect, query, limit)

    async def consolidate(self, timeout_s: float = FLUSH_TIMEOUT_S) -> dict[str, Any]:
        return await asyncio.to_thread(self.sync.consolidate, timeout_s)

    async def shutdown(self, timeout_s: float = FLUSH_TIMEOUT_S) -> None:
        await asyncio.to_thread(self.sync.shutdown, timeout_s)

    async def __aenter__(self) -> AsyncMemoryManager:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.shutdown()
