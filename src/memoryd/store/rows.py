"""Mapping between ``Memory`` and a ``memories`` row (INTEGER microsecond times, JSON text)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, overload

from memoryd.models import (
    Category,
    Memory,
    MemoryType,
    Provenance,
    Relation,
    State,
    Tier,
)

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

# what one recall adds to a memory's confidence (seed 001's holographic trust), on
# either backend
RECALL_TRUST_STEP = 0.02
# column order of an INSERT; ``rowid``, ``vector`` and ``seq`` are handled by the store
MEMORY_COLUMNS = (
    "id",
    "tenant_id",
    "space_id",
    "content",
    "l0_abstract",
    "l1_overview",
    "l2_content",
    "category",
    "memory_type",
    "state",
    "tier",
    "importance",
    "confidence",
    "access_count",
    "tags",
    "scope",
    "agent_id",
    "session_id",
    "source",
    "relations",
    "superseded_by",
    "invalidated_at",
    "created_at",
    "updated_at",
    "last_accessed_at",
    "visibility",
    "owner_agent_id",
    "provenance",
    "version",
    "valid_from",
    "valid_to",
    "expires_at",
    "key",
    "marks",
)
TIME_COLUMNS = frozenset(
    (
        "invalidated_at",
        "created_at",
        "updated_at",
        "last_accessed_at",
        "valid_from",
        "valid_to",
        "expires_at",
    )
)
JSON_LISTS = ("tags", "marks")
SELECT_COLUMNS = ", ".join(f"m.{c}" for c in MEMORY_COLUMNS)


def with_marks(held: str | None, marks: Sequence[str]) -> str:
    """A memory's marks column (JSON text) with ``marks`` added: each once, in order."""
    kept: list[str] = json.loads(held or "[]")
    return json.dumps([*kept, *(m for m in dict.fromkeys(marks) if m not in kept)])


def to_us(value: datetime | None) -> int | None:
    if value is None:
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    delta = value - datetime(1970, 1, 1, tzinfo=UTC)
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@overload
def from_us(value: int) -> datetime: ...
@overload
def from_us(value: int | None) -> datetime | None: ...
def from_us(value: int | None) -> datetime | None:
    if value is None:
        return None
    return _EPOCH + timedelta(microseconds=value)


def memory_to_row(memory: Memory) -> tuple[Any, ...]:
    values: list[Any] = []
    for column in MEMORY_COLUMNS:
        value = getattr(memory, column)
        if column in TIME_COLUMNS:
            value = to_us(value)
        elif column in JSON_LISTS:
            value = json.dumps(value, ensure_ascii=False)
        elif column == "relations":
            value = json.dumps([r.model_dump(mode="json") for r in value], ensure_ascii=False)
        elif column == "provenance":
            value = None if value is None else value.model_dump_json()
        elif hasattr(value, "value"):
            value = value.value
        values.append(value)
    return tuple(values)


_TIME_INDEXES = tuple(MEMORY_COLUMNS.index(c) for c in TIME_COLUMNS)
_JSON_INDEXES = tuple(MEMORY_COLUMNS.index(c) for c in JSON_LISTS)
_ENUMS = tuple(
    (MEMORY_COLUMNS.index(c), e)
    for c, e in (
        ("category", Category),
        ("memory_type", MemoryType),
        ("state", State),
        ("tier", Tier),
    )
)
_RELATIONS = MEMORY_COLUMNS.index("relations")
_PROVENANCE = MEMORY_COLUMNS.index("provenance")


def row_to_memory(row: sqlite3.Row | tuple[Any, ...]) -> Memory:
    """A row as a Memory, built without validation (the row was valid when written).

    Every search turns its 30-60 candidates into memories, so this is on the
    read path's budget: columns are converted by position, and the JSON
    columns that hold nothing (most of them) are not parsed.
    """
    values = list(tuple(row)[: len(MEMORY_COLUMNS)])
    for i in _TIME_INDEXES:
        if values[i] is not None:
            values[i] = _EPOCH + timedelta(microseconds=values[i])
    for i, enum in _ENUMS:
        values[i] = enum(values[i])
    for i in _JSON_INDEXES:
        values[i] = [] if values[i] == "[]" else json.loads(values[i])
    relations = values[_RELATIONS]
    values[_RELATIONS] = (
        [] if relations == "[]" else [Relation.model_validate(r) for r in json.loads(relations)]
    )
    prov = values[_PROVENANCE]
    values[_PROVENANCE] = None if prov is None else Provenance.model_validate_json(prov)
    return Memory.model_construct(**dict(zip(MEMORY_COLUMNS, values, strict=True)))


# a stored vector's numbers: half precision (schema v24), two bytes each
VECTOR_DTYPE = "float16"


@overload
def vector_to_blob(vector: np.ndarray[Any, Any]) -> bytes: ...
@overload
def vector_to_blob(vector: None) -> None: ...
def vector_to_blob(vector: np.ndarray[Any, Any] | None) -> bytes | None:
    import numpy as np  # here: opening a store (memoryd list) does not load NumPy

    return None if vector is None else np.asarray(vector, dtype=VECTOR_DTYPE).tobytes()


@overload
def blob_to_vector(blob: bytes, dim: int | None = None) -> npt.NDArray[np.float32]: ...
@overload
def blob_to_vector(blob: None, dim: int | None = None) -> None: ...
def blob_to_vector(blob: bytes | None, dim: int | None = None) -> npt.NDArray[np.float32] | None:
    """A stored vector as a float32 unit row. Given its ``dim``, one of four bytes a number
    (the embedding cache of a store written before schema v24) is read as such."""
    import numpy as np

    if blob is None:
        return None
    if dim is not None and len(blob) == 4 * dim:
        return np.frombuffer(blob, dtype=np.float32)
    row: npt.NDArray[np.float32] = _unit(
        np.frombuffer(blob, dtype=VECTOR_DTYPE).astype(np.float32)[None, :]
    )[0]
    return row


def blobs_to_matrix(blobs: Sequence[bytes], dim: int) -> npt.NDArray[np.float32]:
    """Stored vectors as the unit rows of one matrix; ``ValueError`` when one of them is not
    ``dim`` numbers long."""
    import numpy as np

    flat = np.frombuffer(b"".join(blobs), dtype=VECTOR_DTYPE)
    if flat.size != len(blobs) * dim:
        raise ValueError(f"a stored vector is not {dim}-dimensional")
    return _unit(flat.astype(np.float32).reshape(len(blobs), dim))


def _unit(rows: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """Rows rescaled to length one (half precision leaves them a few parts in 10,000 off),
    so a dot product stays the cosine; a zero row stays as it is."""
    import numpy as np

    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    norms[norms == 0] = 1
    unit: npt.NDArray[np.float32] = (rows / norms).astype(np.float32)
    return unit


def half_precision(blob: bytes | None) -> bytes | None:
    """A vector stored before schema v24 (four bytes a number) as it is stored now: the
    SQL function ``memoryd_half_precision`` of that migration."""
    import numpy as np

    return None if blob is None else vector_to_blob(np.frombuffer(blob, dtype=np.float32))


def in_rowid_order(page: Callable[[int], Sequence[tuple[Any, ...]]]) -> Iterator[Memory]:
    """Memories page by page: ``page(last)`` gives the rows past rowid ``last`` (the rowid
    last in each row), in rowid order; an export walks a million this way in constant memory."""
    last = 0
    while rows := page(last):
        for row in rows:
            yield row_to_memory(row)
        last = rows[-1][-1]
