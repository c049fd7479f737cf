"""The public Python API: ``Memory(path)`` is an embedded memory store.

from memoryd import Memory
mem = Memory("~/.memoryd")
mem.add("I moved to Berlin in 2024")
mem.search("where does the user live")[0].memory.content
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from memoryd.embed import Embedder
from memoryd.ingest.worker import wait_until_done
from memoryd.models import IngestResult, Message, ScoredMemory, SearchResponse
from memoryd.models import Memory as MemoryRecord
from memoryd.portability import Progress, export_jsonl, import_jsonl, reindex
from memoryd.service import TASK_POLL_S, MemoryService
from memoryd.store.filters import MemoryFilter


class Memory:
    """An embedded memory store in a home directory (default: the XDG data dir)."""

    def __init__(
        self, path: Path | str | None = None, *, embedder: Embedder | None = None, **settings: Any
    ) -> None:
        """``settings`` override the configured ones; ``embedder`` replaces the configured model."""
        from memoryd.config import load_settings

        self.service = MemoryService(settings=load_settings(path, **settings), embedder=embedder)

    # writes
    def add(self, content: str, **fields: Any) -> MemoryRecord:
        return self.service.add(content, **fields)

    def update(self, memory_id: str, **fields: Any) -> MemoryRecord:
        return self.service.update(memory_id, **fields)

    def delete(self, memory_id: str) -> None:
        self.service.delete(memory_id)

    def batch_delete(
        self, ids: Sequence[str] | None = None, confirm: bool = False, **filter_fields: Any
    ) -> dict[str, Any]:
        f = MemoryFilter(**filter_fields) if filter_fields else None
        return self.service.batch_delete(ids=ids, filter=f, confirm=confirm)

    def delete_all(self, confirm: bool = False) -> dict[str, int]:
        return self.service.delete_all(confirm=confirm)

    def ingest(self, messages: Sequence[Message | dict[str, Any]], **options: Any) -> IngestResult:
        return self.service.ingest(messages, **options)

    def mark_noise(self, memory_id: str) -> None:
        """Delete a memory that is chatter and teach the noise filter to drop its like."""
        self.service.mark_noise(memory_id)

    def task(self, task_id: str) -> dict[str, Any]:
        """The status of an ingest task (smart ones run in the background)."""
        return self.service.task(task_id)

    def wait_for_task(self, task_id: str, timeout_s: float = 60.0) -> dict[str, Any]:
        return self.service.wait_for_task(task_id, timeout_s)

    # file import
    def import_file(self, path: Path | str, **options: Any) -> dict[str, Any]:
        """Queue the import of a file (text, Markdown, PDF, chat export); its ImportTask.

        ``options``: strategy, file_type, post_process, force, agent_id.
        """
        from memoryd.imports.service import Imports, read_upload

        data, name = read_upload(path, self.service.settings.max_import_bytes)
        return Imports(self.service).create(data, name, **options)

    def import_task(self, import_id: str) -> dict[str, Any]:
        from memoryd.imports.service import Imports

        return Imports(self.service).get(import_id)

    def wait_for_import(self, import_id: str, timeout_s: float = 300.0) -> dict[str, Any]:
        return wait_until_done(self.import_task, import_id, timeout_s, TASK_POLL_S)

    def rollback_import(self, import_id: str) -> dict[str, Any]:
        """Remove what an import created and restore what it changed."""
        from memoryd.imports.service import Imports

        return Imports(self.service).rollback(import_id)

    # reads
    def get(self, memory_id: str) -> MemoryRecord:
        return self.service.get(memory_id)

    def list(self, **filters: Any) -> builtins.list[MemoryRecord]:
        return self.service.list_memories(**filters)[0]

    def search(self, query: str, **options: Any) -> builtins.list[ScoredMemory]:
        return self.service.search(query, **options).results

    def explain(self, query: str, **options: Any) -> SearchResponse:
        """Search with the per-stage trace."""
        return self.service.search(query, include_trace=True, **options)

    def history(self, memory_id: str) -> builtins.list[dict[str, Any]]:
        return self.service.history(memory_id)

    def stats(self) -> dict[str, Any]:
        return self.service.stats()

    def profile(self, query: str | None = None) -> dict[str, Any]:
        """The synthesized user profile: stable facts and recent context (reference §4.11)."""
        from memoryd.profile import build_profile

        return build_profile(self.service, query)

    # portability
    def export(self, path: Path | str, progress: Progress | None = None) -> int:
        with Path(path).open("w", encoding="utf-8") as out:
            return export_jsonl(self.service, out, progress)

    def import_(self, path: Path | str, progress: Progress | None = None) -> dict[str, int]:
        with Path(path).open(encoding="utf-8") as lines:
            return import_jsonl(self.service, lines, progress)

    def reindex(self, progress: Progress | None = None) -> int:
        return reindex(self.service, progress)

    def close(self) -> None:
        self.service.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
