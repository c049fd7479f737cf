"""Export and import as JSON Lines, and re-embedding: moving memories losslessly.

An export holds every memory in every state (ids, relations, timestamps to
the microsecond), every memory's history (so ``history`` and ``as_of``
answer after an import as they did before), and the raw session messages.
Vectors are not exported: they are derived data, re-computed on import with
the importing store's model, which is also how a store changes models.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime
from pathlib import Path
from typing import IO, Any

from pydantic import BaseModel, ConfigDict
from pydantic import ValidationError as PydanticValidationError

from memoryd.errors import ForbiddenError, ValidationError
from memoryd.models import Memory, MemoryType, State, format_ts, lone_surrogate, new_id
from memoryd.service import MemoryService
from memoryd.store import MemoryFilter
from memoryd.store.rows import from_us, to_us, vector_to_blob
from memoryd.store.sqlite import RawMessage
from memoryd.text.conversation import embedding_text, message_hash

FORMAT = "memoryd-export"
FORMAT_VERSION = 2  # 2 adds history records; version 1 files still import
READABLE_VERSIONS = (1, 2)
BATCH = 256
# an export record nests four levels (line, memory, provenance or relations, relation);
# a deeper line is not a record, and parsing one without a bound would exhaust the stack
MAX_LINE_DEPTH = 16
SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
Progress = Callable[[int], None]


def export_lines(service: MemoryService) -> Iterator[dict[str, Any]]:
    yield {
        "type": "header",
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "tenant_id": service.tenant_id,
        "space_id": service.space_id,
        "embedding_model": service.store.get_meta("embed_model"),
    }
    seen: set[str] = set()
    for memory in service.store.iter_all(
        service.tenant_id, [service.space_id], viewer=service.viewer
    ):
        seen.add(memory.id)
        yield {"type": "memory", "memory": memory.to_json()}
    for row in service.store.space_history(service.tenant_id, service.space_id):
        if service.viewer is None or row["memory_id"] in seen:  # an agent's: what it sees
            yield {"type": "history", **row, "at": format_ts(from_us(row["at"]))}
    # the raw transcripts are the owner's: an agent's export holds what it sees
    owner = service.viewer is None
    messages = service.store.iter_session_messages(service.tenant_id, service.space_id)
    for message in messages if owner else ():
        yield {
            "type": "message",
            **message,
            "said_at": format_ts(from_us(message["said_at"])),
            "stored_at": format_ts(from_us(message["stored_at"])),
        }


def export_jsonl(service: MemoryService, out: IO[str], progress: Progress | None = None) -> int:
    """Write the export; returns how many memories it holds."""
    count = 0
    for line in export_lines(service):
        out.write(json.dumps(line, ensure_ascii=False) + "\n")
        if line["type"] == "memory":
            count += 1
            if progress:
                progress(1)
    return count


class _Message(BaseModel):
    model_config = ConfigDict(extra="ignore")

    session_id: str
    agent_id: str | None = None
    role: str
    content: str
    said_at: datetime | None = None
    stored_at: datetime | None = None
    memory_id: str | None = None

    def raw(self) -> RawMessage:
        return RawMessage(
            self.role,
            self.content,
            message_hash(self.role, self.content),
            to_us(self.said_at),
            self.memory_id,
            to_us(self.stored_at),
        )


class _History(BaseModel):
    model_config = ConfigDict(extra="ignore")

    memory_id: str
    action: str
    old: dict[str, Any] | None = None
    new: dict[str, Any] | None = None
    actor: str | None = None
    at: datetime

    def row(self, memory_id: str) -> dict[str, Any]:
        return {**self.model_dump(), "memory_id": memory_id, "at": to_us(self.at)}


Record = Memory | _Message | _History


def _text_lines(lines: Iterable[str]) -> Iterator[tuple[int, str]]:
    """Numbered lines; a file that is not UTF-8 text is an error naming the line."""
    number = 0
    iterator = iter(lines)
    while True:
        number += 1
        try:
            raw = next(iterator)
        except StopIteration:
            return
        except UnicodeDecodeError:
            raise ValidationError(
                f"line {number} is not UTF-8 text: this is not a {FORMAT} file "
                "(import-file takes notes, documents and chat exports)"
            ) from None
        yield number, raw


def _records(lines: Iterable[str]) -> Iterator[Record]:
    """Validated records of an export; the first bad line raises with its number."""
    seen_header = False
    for number, raw in _text_lines(lines):
        if not raw.strip():
            continue
        try:
            line = json.loads(raw)
            too_deep = nesting_depth(line, MAX_LINE_DEPTH) > MAX_LINE_DEPTH
        except json.JSONDecodeError as exc:
            raise ValidationError(f"line {number} is not JSON: {exc.msg}") from None
        except RecursionError:  # how the parser says "too deep", far past the bound
            too_deep = True
        if too_deep:
            raise ValidationError(f"line {number} is nested deeper than {MAX_LINE_DEPTH} levels")
        # the line was UTF-8: only a \uD8xx-\uDFxx escape can decode to a surrogate, so a
        # line without one is spared the walk over every string it holds
        if SURROGATE_ESCAPE.search(raw) and lone_surrogate(line):
            raise ValidationError(f"line {number} holds text that is not valid Unicode")
        kind = line.get("type") if isinstance(line, dict) else None
        try:
            if kind == "header":
                if line.get("format") != FORMAT or line.get("version") not in READABLE_VERSIONS:
                    raise ValidationError(
                        f"line {number}: not a {FORMAT} file of version "
                        f"{' or '.join(map(str, READABLE_VERSIONS))}"
                    )
                seen_header = True
                continue
            if not seen_header:
                raise ValidationError(f"line {number}: the file has no {FORMAT} header")
            if kind == "memory":
                yield legacy_marks(Memory.model_validate(line["memory"]))
            elif kind == "message":
                yield _Message.model_validate(line)
            elif kind == "history":
                yield _History.model_validate(line)
            else:
                raise ValidationError(f"line {number}: unknown record type {kind!r}")
        except (KeyError, TypeError, PydanticValidationError) as exc:
            raise ValidationError(f"line {number}: invalid {kind} record: {exc}") from None


def legacy_marks(memory: Memory) -> Memory:
    """A distilled memory exported before marks existed keeps its slot in its tags:
    move that bookkeeping to ``marks``, as the store's migration 0007 does."""
    from memoryd.ingest.reconcile import NEGATIVE_MARK, SLOT_MARK_PREFIX, VALUE_MARK_PREFIX

    if memory.memory_type is not MemoryType.INSIGHT or memory.marks:
        return memory
    internal = [
        t for t in memory.tags if t.startswith((SLOT_MARK_PREFIX, VALUE_MARK_PREFIX, NEGATIVE_MARK))
    ]
    if internal:
        memory.tags = [t for t in memory.tags if t not in internal]
        memory.marks = internal
    return memory


def nesting_depth(value: Any, stop_after: int) -> int:
    """How deeply ``value`` nests lists and objects, counted level by level (no recursion)
    and no further than one level past ``stop_after``."""
    depth, level = 0, [value]
    while level and depth <= stop_after:
        depth += 1
        level = [
            child
            for v in level
            if isinstance(v, dict | list)
            for child in (v.values() if isinstance(v, dict) else v)
        ]
    return depth


def import_jsonl(
    service: MemoryService, lines: IO[str], progress: Progress | None = None
) -> dict[str, int]:
    """Load an export into this service's space.

    The whole file is validated before anything is written, so a bad line
    imports nothing. Ids already present are skipped; a memory whose ``key``
    is held here by another memory is skipped too and counted in
    ``key_conflicts`` (its slot already has a value in this store).
    An import is the owner's: it brings every scope along, so an agent's view
    may not run one.
    """
    if service.viewer is not None:
        raise ForbiddenError("an import is the owner's: run it without an agent identity")
    with_history = {r.memory_id for r in _records(lines) if isinstance(r, _History)}
    lines.seek(0)
    stats = {"imported": 0, "skipped": 0, "key_conflicts": 0, "messages": 0}
    batch: list[Memory] = []
    messages: list[_Message] = []
    history: list[dict[str, Any]] = []
    imported: dict[str, str] = {}  # id in the file -> id here
    keys_here: set[str] = set()
    for record in _records(lines):
        if isinstance(record, _Message):
            messages.append(record)
            continue
        if isinstance(record, _History):
            if record.memory_id in imported:
                history.append(record.row(imported[record.memory_id]))
            continue
        store = service.store
        if record.id in imported or (
            store.get(service.tenant_id, [service.space_id], record.id) is not None
        ):  # here already, or twice in the file
            stats["skipped"] += 1
            if progress:  # a memory of the file is done with: the bar moves for it too
                progress(1)
            continue
        file_id = record.id
        if store.memory_id_taken(record.id):  # an id of another space: import as a new memory
            record.id = new_id()
            if file_id in with_history:
                with_history.add(record.id)
        if record.key and record.state is not State.DELETED:
            taken = record.key in keys_here or store.count(
                service.tenant_id, [service.space_id], MemoryFilter(key=record.key)
            )
            if taken:
                stats["key_conflicts"] += 1
                if progress:
                    progress(1)
                continue
            keys_here.add(record.key)
        record.tenant_id, record.space_id = service.tenant_id, service.space_id
        imported[file_id] = record.id
        batch.append(record)
        stats["imported"] += 1
        if len(batch) >= BATCH:
            _flush(service, batch, with_history, progress)
    _flush(service, batch, with_history, progress)
    if history:
        service.store.add_history(service.tenant_id, service.space_id, history)
    if messages:
        with service.store.write() as conn:
            for m in messages:
                fresh = service.store.add_session_messages(
                    conn,
                    service.tenant_id,
                    service.space_id,
                    m.session_id,
                    m.agent_id,
                    [m.raw()],
                )
                stats["messages"] += sum(fresh)
    return stats


def _flush(
    service: MemoryService, batch: list[Memory], with_history: set[str], progress: Progress | None
) -> None:
    """Embed and insert a batch; memories that bring their history get no new ``create`` row.

    In the caller's thread: embedding on a thread of its own while the caller
    reads the next batch was slower on 2 cores (the model's threads lost a
    core to the parsing; ``python -m bench import``: 0.80 of the bare model
    against 0.86).
    """
    if not batch:
        return
    vectors = service.embed([embedding_text(m) for m in batch])
    for created in (True, False):
        part = [
            (m, v) for m, v in zip(batch, vectors, strict=True) if created != (m.id in with_history)
        ]
        if part:
            service.store.insert_memories(
                [m for m, _ in part], [v for _, v in part], actor="import", created=created
            )
    if progress:
        progress(len(batch))
    batch.clear()


def reindex(service: MemoryService, progress: Progress | None = None) -> int:
    """Re-embed every memory with the configured model and rebind the store to it."""
    from memoryd.embed import create_embedder

    engine = service.engine
    embedder = engine._embedder or create_embedder(service.settings)
    store = engine.sqlite_store
    rows = [
        (rowid, Memory.model_construct(content=c, l1_overview=l1, memory_type=MemoryType(t)))
        for rowid, c, l1, t in store.conn.execute(
            "SELECT rowid, content, l1_overview, memory_type FROM memories ORDER BY rowid"
        )
    ]
    for start in range(0, len(rows), BATCH):
        chunk = rows[start : start + BATCH]
        vectors = embedder.embed([embedding_text(m) for _, m in chunk])
        with store.write() as conn:
            seq = store._bump_seq(conn)
            conn.executemany(
                "UPDATE memories SET vector = ?, seq = ? WHERE rowid = ?",
                [
                    (vector_to_blob(v), seq, rowid)
                    for (rowid, _), v in zip(chunk, vectors, strict=True)
                ],
            )
        if progress:
            progress(len(chunk))
    with store.write() as conn:
        store.set_meta(conn, "embed_model", embedder.name)
        store.set_meta(conn, "embed_dim", str(embedder.dim))
    if store.index is not None:
        store.index.stop_building()
    store.index = None
    engine._embedder = embedder
    engine._retriever = None
    return len(rows)


def count_lines(path: Path) -> int:
    """How many memory records a file holds (read as bytes: checking it is the import's job)."""
    with path.open("rb") as fh:
        return sum(1 for line in fh if b'"type": "memory"' in line)
