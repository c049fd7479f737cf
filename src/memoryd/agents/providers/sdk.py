"""What the ``local`` and ``remote`` providers share: memoryd's SDK underneath.

``Memory`` (embedded) and ``RemoteMemory`` (a server) answer the same
calls, so one class serves both; the two providers differ only in which
one they open. Conversations go in through smart ingest: the turns are
stored before ``capture`` returns, and their distilling runs as a task
whose id is kept until :meth:`flush` has seen it finish.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from typing import Any, Protocol, Unpack

from memoryd.agents.providers.base import FLUSH_TIMEOUT_S, MemoryHit, MemoryProvider
from memoryd.errors import ValidationError
from memoryd.models import IngestResult, MemoryType, ScoredMemory
from memoryd.models import Memory as MemoryRecord
from memoryd.options import AddFields, IngestOptions, SearchOptions

log = logging.getLogger(__name__)

SOURCE = "agent"


class SdkLike(Protocol):
    """The calls both memoryd SDK classes answer alike."""

    def add(self, content: str, **fields: Unpack[AddFields]) -> MemoryRecord: ...

    def delete(self, memory_id: str) -> None: ...

    def search(self, query: str, **options: Unpack[SearchOptions]) -> list[ScoredMemory]: ...

    def ingest(
        self, messages: Any, *, mode: str = ..., dates: Any = ..., **options: Unpack[IngestOptions]
    ) -> IngestResult: ...

    def wait_for_task(self, task_id: str, timeout_s: float = ...) -> dict[str, Any]: ...

    def history(self, memory_id: str) -> list[dict[str, Any]]: ...

    def consolidate(self, *, wait: bool = ..., timeout_s: float = ...) -> dict[str, Any]: ...

    def close(self) -> None: ...


def hit(found: ScoredMemory | MemoryRecord) -> MemoryHit:
    memory = found.memory if isinstance(found, ScoredMemory) else found
    return MemoryHit(
        id=memory.id,
        content=memory.content,
        score=found.score if isinstance(found, ScoredMemory) else 1.0,
        category=memory.category,
        created_at=memory.created_at,
        similarity=found.similarity if isinstance(found, ScoredMemory) else None,
        session_id=memory.session_id,
        turn=memory.memory_type is MemoryType.SESSION,
    )


class SdkProvider(MemoryProvider):
    """A provider over a memoryd SDK object (``self.memory``)."""

    memory: SdkLike

    def _start(self, memory: SdkLike) -> None:
        self.memory = memory
        self._pending: list[str] = []
        self._lock = threading.Lock()

    def search(self, query: str, *, limit: int) -> list[MemoryHit]:
        return [hit(r) for r in self.memory.search(query, limit=limit)]

    def remember(
        self, content: str, *, tags: Sequence[str] = (), replaces: str | None = None
    ) -> MemoryHit:
        fields: dict[str, Any] = {"tags": list(tags), "source": SOURCE}
        if replaces is not None:
            fields["replaces"] = replaces
        return hit(self.memory.add(content, **fields))

    def forget(self, memory_id: str) -> None:
        self.memory.delete(memory_id)

    def capture(self, messages: Sequence[dict[str, str]], *, session_id: str) -> None:
        result = self.memory.ingest(
            list(messages), mode="smart", session_id=session_id, source=SOURCE
        )
        with self._lock:
            self._pending.append(result.task_id)

    def flush(self, timeout_s: float = FLUSH_TIMEOUT_S) -> None:
        """Wait for every extraction started here; one that does not finish in time is
        left queued (its turns are stored; the next worker finishes it) and said so."""
        with self._lock:
            pending, self._pending = self._pending, []
        late = []
        for task_id in pending:
            try:
                task = self.memory.wait_for_task(task_id, timeout_s)
            except ValidationError:  # still running after timeout_s
                late.append(task_id)
                continue
            if task["status"] == "failed":
                log.warning("extraction task %s failed: %s", task_id, task.get("errors"))
        if late:
            log.warning(
                "%d extraction task(s) still running after %.0fs; their turns are stored and "
                "the task resumes on the next start: %s",
                len(late),
                timeout_s,
                ", ".join(late),
            )

    def consolidate(self, *, timeout_s: float = FLUSH_TIMEOUT_S) -> dict[str, Any]:
        return self.memory.consolidate(wait=True, timeout_s=timeout_s)

    def history(self, memory_id: str) -> list[dict[str, Any]]:
        return self.memory.history(memory_id)

    def close(self) -> None:
        try:
            self.flush()
        finally:
            self.memory.close()
