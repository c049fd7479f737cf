"""File import for one tenant: accept a file, queue it, report it, undo it (reference §4.14-4.15).

Accepting is quick and checks everything a caller can fix: the size, the
bytes (binary, not UTF-8, unreadable PDF), the options, and whether the
same content was imported already (SHA-256, unless ``force``). The file's
decoded, privacy-filtered text is stored with the task, so a restart loses
nothing and a re-run needs no upload. The work itself is the import
worker's (:mod:`memoryd.imports.runner`).
"""

from __future__ import annotations

import hashlib
import os
import socket
import uuid
from pathlib import Path, PurePath
from typing import Any

import numpy as np

from memoryd.errors import NotFoundError, PayloadTooLargeError, ValidationError
from memoryd.ids import resolve_id
from memoryd.imports.formats import Decoded, Format, decode
from memoryd.imports.runner import (
    IMPORT,
    IMPORT_CONCURRENCY,
    INTERRUPTED,
    ImportRunner,
    passages,
)
from memoryd.imports.split import Strategy, detect_strategy
from memoryd.ingest.smart import smart_ingest_for
from memoryd.jobs.worker import TaskWorker, worker_alive
from memoryd.models import MemoryType, Relation, RelationType, State, format_ts, utcnow
from memoryd.privacy import redact
from memoryd.service import MemoryService
from memoryd.store import MemoryFilter
from memoryd.store.tasks import MAX_ATTEMPTS
from memoryd.validate import MAX_CONTENT_CHARS, check_tags

FILE_TYPES = ("memory", "session", "markdown", "jsonl")
DEFAULT_LIST_LIMIT = 50
MAX_LIST_LIMIT = 1000
# reference §4.15: cross-reconcile links memories this similar as supporting each other
CROSS_RECONCILE_SIMILARITY = 0.85
# an import not yet at its end: running, or stopped on request and queued to run again
UNFINISHED = ("processing", INTERRUPTED)
MAX_CROSS_RECONCILE = 5000
CODE_EXTENSIONS = {
    ".py": "python", ".js": "javascript", ".ts": "typescript", ".rs": "rust", ".go": "go",
    ".java": "java", ".c": "c", ".cpp": "cpp", ".rb": "ruby", ".sh": "shell", ".sql": "sql",
}  # fmt: skip


def start_import_worker(service: MemoryService) -> TaskWorker:
    """The process's import worker (3 threads), resuming interrupted imports first."""

    def run(task: dict[str, Any]) -> dict[str, Any]:
        return ImportRunner(smart_ingest_for(service.engine, task)).run(task)

    def give_up(import_id: str) -> None:
        """An import interrupted too often: what its last attempt wrote goes, it is failed."""
        deleted, _ = service.store.rollback_import(import_id)
        service.store.update_import(
            import_id,
            status="failed",
            errors=[
                f"interrupted {MAX_ATTEMPTS} times; gave up",
                f"partial results rolled back ({deleted} memories)",
            ],
        )

    return service.engine.start_worker(run, IMPORT, IMPORT_CONCURRENCY, give_up)


class Imports:
    def __init__(self, service: MemoryService) -> None:
        self.service = service
        self.store = service.store

    # ------------------------------------------------------------------ accept
    def create(
        self,
        data: bytes,
        filename: str,
        *,
        file_type: str = "memory",
        strategy: str = "auto",
        post_process: bool = True,
        force: bool = False,
        agent_id: str | None = None,
        space_id: str | None = None,
        tags: Any = None,
        source: str | None = None,
    ) -> dict[str, Any]:
        """Queue an import; the ImportTask as it stands (``processing``).

        ``resumed`` is true when the file was an unfinished import's, which goes on.
        """
        import_id, _, resumed = self._accept(
            data,
            filename,
            file_type=file_type,
            strategy=strategy,
            post_process=post_process,
            force=force,
            agent_id=agent_id,
            space_id=space_id,
            tags=tags,
            source=source,
        )
        return {**self.get(import_id), "resumed": resumed}

    def _accept(
        self,
        data: bytes,
        filename: str,
        *,
        file_type: str,
        strategy: str,
        post_process: bool,
        force: bool,
        agent_id: str | None,
        space_id: str | None,
        tags: Any,
        source: str | None,
    ) -> tuple[str, Decoded, bool]:
        """Check, record and queue an import; its id, the content, whether it resumes one.

        The same content as an import that never finished (interrupted, killed)
        resumes that import rather than being refused as a duplicate.
        """
        svc = self.service
        if file_type not in FILE_TYPES:
            raise ValidationError(f"unknown file_type: {file_type} (expected one of {FILE_TYPES})")
        if strategy not in tuple(Strategy):
            raise ValidationError(
                f"unknown strategy: {strategy} (expected one of {[s.value for s in Strategy]})"
            )
        if space_id not in (None, "", "personal", svc.space_id):
            raise ValidationError(
                "imports go to the personal space; share the imported memories afterwards"
            )
        limit = svc.settings.max_import_bytes
        if len(data) > limit:
            raise PayloadTooLargeError(f"{filename} is {len(data)} bytes; the limit is {limit}")
        decoded = private_filtered(decode(data, filename))
        digest = hashlib.sha256(data).hexdigest()
        if not force:
            earlier = self.store.import_with_hash(svc.tenant_id, svc.space_id, digest)
            if earlier is not None and self.get(earlier)["status"] in UNFINISHED:
                start_import_worker(svc).notify()  # an unfinished import of it: finish that one
                return earlier, decoded, True
            if earlier is not None:
                raise ValidationError(
                    f"file already imported (duplicate content): import {earlier}; to "
                    "import it again, ask with force (--force on the command line, "
                    "force=true over REST)"
                )
        resolved = resolve_strategy(decoded, Strategy(strategy))
        import_id = str(uuid.uuid4())
        record: dict[str, Any] = {
            "id": import_id,
            "tenant_id": svc.tenant_id,
            "space_id": svc.space_id,
            "filename": filename,
            "file_type": file_type,
            "content_hash": digest,
            "strategy": resolved.value,
            "status": "processing",
            "requested_strategy": strategy,
            "format": decoded.format.value,
            "size_bytes": len(data),
            "agent_id": agent_id,
            "post_process": post_process,
            "extraction_status": "pending" if post_process else "skipped",
            "reconcile_status": "pending" if post_process else "skipped",
            "errors": [],
        }
        payload = {
            "import_id": import_id,
            "filename": filename,
            "strategy": resolved.value,
            "post_process": post_process,
            "agent_id": agent_id,
            "tags": check_tags(tags),
            "source": source,
            "text": "" if decoded.is_chat else decoded.text,
            "conversations": [
                {"title": c.title, "messages": c.messages} for c in decoded.conversations
            ],
        }
        with self.store.write() as conn:
            self.store.record_import(conn, record)
            self.store.record_task(
                conn, import_id, svc.tenant_id, svc.space_id, IMPORT, "queued", {}, payload
            )
        start_import_worker(svc).notify()
        return import_id, decoded, False

    def upload_file(self, data: bytes, filename: str) -> dict[str, Any]:
        """``POST /v1/files``: the file's chunks stored as they are, tagged by file and type."""
        kind = content_type(filename, data)
        chunk_type = kind.split("(")[0].lower()
        import_id, decoded, _ = self._accept(
            data,
            filename,
            file_type="memory",
            strategy=Strategy.ATOMIC.value,
            post_process=False,
            force=True,
            agent_id=None,
            space_id=None,
            tags=[f"file:{filename}", f"chunk_type:{chunk_type}"],
            source=f"file_upload:{filename}",
        )
        stored = (
            sum(len(c.messages) for c in decoded.conversations)
            if decoded.is_chat
            else len(passages(decoded.text))
        )
        return {
            "task_id": import_id,
            "filename": filename,
            "content_type": kind,
            "chunks_created": stored,
        }

    # ------------------------------------------------------------------ read
    def resolve(self, import_id: Any) -> str:
        """The full id of an import from its id or a unique prefix (4+ characters)."""
        tenant = self.service.tenant_id
        return resolve_id(
            "import task",
            import_id,
            lambda prefix, n: self.store.ids_with_prefix(
                "import_tasks", "id", prefix, "tenant_id = ?", [tenant], n
            ),
        )

    def get(self, import_id: str) -> dict[str, Any]:
        import_id = self.resolve(import_id)
        record = self.store.get_import(self.service.tenant_id, import_id)
        if record is None:
            raise NotFoundError(f"import task {import_id}")
        return import_json(record)

    def list(self, limit: int = DEFAULT_LIST_LIMIT) -> dict[str, Any]:
        if not 1 <= limit <= MAX_LIST_LIMIT:
            raise ValidationError(f"limit must be 1..{MAX_LIST_LIMIT}")
        svc = self.service
        records, total = self.store.list_imports(svc.tenant_id, svc.space_id, limit)
        return {"imports": [import_json(r) for r in records], "total": total}

    # ------------------------------------------------------------------ change
    def resume(self, import_id: str) -> dict[str, Any]:
        """Queue an unfinished import (interrupted, or left by a stopped worker) to run to
        its end; the import as it stands now."""
        record = self.get(import_id)
        if record["status"] not in UNFINISHED:
            raise ValidationError(
                f"import {record['id']} is {record['status']}: only an unfinished import resumes"
            )
        self.store.update_import(record["id"], status="processing")
        start_import_worker(self.service).notify()  # takes up what a stopped worker left
        return self.get(record["id"])

    def rollback(self, import_id: str) -> dict[str, Any]:
        """Remove what the import created and restore what it changed: nothing else."""
        record = self.get(import_id)
        import_id = record["id"]
        if record["status"] in UNFINISHED:
            # an import that stopped half-way (interrupted, killed) may be rolled back;
            # one that a live worker runs may not
            own = f"{socket.gethostname()}:{os.getpid()}"
            if not self.store.cancel_task(
                import_id,
                lambda w: worker_alive(w, own) or w.startswith(own + "/"),
                "rolled back before it finished",
            ):
                raise ValidationError(
                    f"import {import_id} is still processing; roll back when done"
                )
        memories, sessions = self.store.rollback_import(import_id)
        self.store.update_import(import_id, status="rolled_back")
        return {
            "deleted_memories": memories,
            "deleted_sessions": sessions,
            "import_status": "rolled_back",
        }

    def rerun(self, import_id: str) -> dict[str, Any]:
        """Extraction again from the stored text: the previous run's memories are replaced."""
        record = self.get(import_id)
        import_id = record["id"]
        if record["status"] == "processing":
            raise ValidationError("intelligence task already running")
        self.store.rollback_import(import_id)
        self.store.update_import(
            import_id,
            status="processing",
            post_process=True,
            extraction_status="pending",
            reconcile_status="pending",
            errors=[],
        )
        self.store.requeue_task(import_id, {"post_process": True})
        start_import_worker(self.service).notify()
        return self.get(import_id)

    def cross_reconcile(self) -> dict[str, Any]:
        """``supports`` relations between distilled memories that say the same thing."""
        svc = self.service
        found, _ = self.store.list_memories(
            svc.tenant_id,
            [svc.space_id],
            MemoryFilter(
                memory_type=[MemoryType.INSIGHT, MemoryType.PINNED],
                state=[State.ACTIVE],
                live_at=utcnow(),
            ),
            limit=MAX_CROSS_RECONCILE,
        )
        vectors = self.store.vectors_of([m.id for m in found])
        memories = [m for m in found if m.id in vectors]
        if len(memories) < 2:
            return {"relations_created": 0, "memories_scanned": len(memories)}
        matrix = np.stack([vectors[m.id] for m in memories])
        matrix /= np.linalg.norm(matrix, axis=1, keepdims=True) + 1e-12
        created = 0
        for i, memory in enumerate(memories):
            similar = np.nonzero(matrix[i + 1 :] @ matrix[i] >= CROSS_RECONCILE_SIMILARITY)[0]
            linked = {r.target_id for r in memory.relations}
            new = [
                Relation(relation_type=RelationType.SUPPORTS, target_id=memories[i + 1 + j].id)
                for j in similar
                if memories[i + 1 + j].id not in linked
            ]
            if new:
                svc.update(memory.id, relations=[*memory.relations, *new])
                created += len(new)
        return {"relations_created": created, "memories_scanned": len(memories)}


def read_upload(path: Path | str, limit: int) -> tuple[bytes, str]:
    """A file's bytes and name, refused by its size before it is read."""
    file = Path(path).expanduser()
    if not file.is_file():
        raise ValidationError(f"{file} is not a file")
    size = file.stat().st_size
    if size > limit:
        raise PayloadTooLargeError(f"{file.name} is {size} bytes; the limit is {limit}")
    return file.read_bytes(), file.name


def private_filtered(decoded: Decoded) -> Decoded:
    """``<private>`` redacted before the text is stored or sent anywhere; private turns dropped."""
    text = redact(decoded.text) or ""
    if decoded.is_chat:
        for conv in decoded.conversations:
            kept = []
            for message in conv.messages:
                public = redact(message["content"])
                if public is not None:
                    kept.append({**message, "content": public})
            conv.messages = kept
        decoded.conversations = [c for c in decoded.conversations if c.messages]
        if not decoded.conversations:
            raise ValidationError("every message of the file is <private>: nothing to import")
    elif not text.strip():
        raise ValidationError("the file is entirely <private>: nothing to import")
    return Decoded(decoded.format, text, decoded.conversations)


def resolve_strategy(decoded: Decoded, requested: Strategy) -> Strategy:
    if decoded.is_chat:
        return Strategy.ATOMIC  # conversations are distilled into facts, whatever was asked
    resolved = detect_strategy(decoded.text) if requested is Strategy.AUTO else requested
    if resolved is Strategy.DOCUMENT and len(decoded.text) > MAX_CONTENT_CHARS:
        raise ValidationError(
            f"the document strategy takes at most {MAX_CONTENT_CHARS} characters; "
            "use atomic or section for this file"
        )
    return resolved


def content_type(filename: str, data: bytes) -> str:
    """The ``content_type`` of ``POST /v1/files``: Pdf, Code("lang") or Text."""
    if data.startswith(b"%PDF-"):
        return "Pdf"
    language = CODE_EXTENSIONS.get(PurePath(filename).suffix.lower())
    return f'Code("{language}")' if language else "Text"


TASK_FIELDS = (
    "id", "status", "file_type", "filename", "agent_id", "space_id", "post_process", "strategy",
    "storage_total", "storage_stored", "storage_skipped",
    "extraction_status", "extraction_chunks", "extraction_facts", "extraction_progress",
    "reconcile_status", "reconcile_relations", "reconcile_merged", "reconcile_progress",
    "errors", "created_at", "completed_at",
    "requested_strategy", "format", "size_bytes", "content_hash", "sources_stored",
    "memories_created", "decisions", "extractor", "llm", "notes",
)  # fmt: skip
DEFAULTS: dict[str, Any] = {
    "storage_total": 1,
    "storage_stored": 1,
    "storage_skipped": 0,
    "extraction_chunks": 0,
    "extraction_facts": 0,
    "extraction_progress": 0,
    "reconcile_relations": 0,
    "reconcile_merged": 0,
    "reconcile_progress": 0,
    "sources_stored": 0,
    "memories_created": 0,
    "decisions": {},
    "extractor": None,
    "llm": None,
    "notes": [],
}


def import_json(record: dict[str, Any]) -> dict[str, Any]:
    """The ImportTask of reference §2.3 (its fields first, in its order), plus memoryd's counts."""
    data = {**DEFAULTS, **record}
    data["created_at"] = format_ts(record["created_at"])
    data["completed_at"] = format_ts(record["completed_at"])
    return {k: data.get(k) for k in TASK_FIELDS}


__all__ = ["Format", "Imports", "start_import_worker"]
