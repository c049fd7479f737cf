"""What a large space's vector index keeps on disk between processes: its graph and its rows.

Both are caches of the rows in SQLite. Each file has a description beside it
(``<file>.json``) recording the model, the dimension, the store's change
counter (``seq``) the file holds every write up to, and the file's own size
and modification time. A file whose description is missing or does not
match (a crash while saving, a file edited or truncated, another model) is
not used: the caller reads the rows from SQLite again, which is slow, never
wrong.

The graph (:class:`GraphFile`) only proposes candidates, so a stale one costs
recall at most. The rows (:class:`RowsFile`), whose vectors a process maps
rather than reads, are what a search scores and filters, so they must also
be the rows *this* database holds: each save is
given a fresh token, which the store records in the database once the file
is written (``SearchLegs``), and a file is read only under the token the
database vouches for. A database restored from a backup vouches for an older
token, or none, and its index is read from its rows.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import numpy.typing as npt

from memoryd.store.hnsw_index import HnswGraph
from memoryd.store.index_kinds import KIND_NAMES

if TYPE_CHECKING:
    from memoryd.store.index_arrays import IndexColumns

log = logging.getLogger(__name__)

# room for more rows in a rows file: an eighth of its rows, at least this many
SPARE_MIN = 1024
SPARE_SHARE = 8
# the int64 columns ahead of the vectors in a rows file (``_in_file_order``)
INT_COLUMNS = 6


def partial_path(path: Path) -> Path:
    """Where ``path`` is written before it is renamed into place (one per process)."""
    return path.with_name(f"{path.name}.{os.getpid()}.partial")


@dataclass(frozen=True)
class SavedFile:
    """A file of a space's index and its description: written whole, read only if it fits."""

    path: Path
    model: str
    dim: int
    # the layout of the file: a file of another layout is not read
    version: ClassVar[int] = 1

    @property
    def meta_path(self) -> Path:
        return self.path.with_name(self.path.name + ".json")

    def described(self) -> dict[str, Any] | None:
        """The file's description when it matches the file, this model and dimension; None
        (and why, in the log) when the file cannot be used."""
        try:
            meta = json.loads(self.meta_path.read_text(encoding="utf-8"))
            stat = self.path.stat()
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            log.warning("%s: unreadable description (%s); not used", self.path, exc)
            return None
        expected = {
            "version": self.version,
            "model": self.model,
            "dim": self.dim,
            "bytes": stat.st_size,
            "mtime_ns": stat.st_mtime_ns,
        }
        if not isinstance(meta, dict) or any(meta.get(k) != v for k, v in expected.items()):
            log.warning("%s does not match its description; not used", self.path)
            return None
        if not isinstance(meta.get("seq"), int) or not isinstance(meta.get("count"), int):
            log.warning("%s: its description has no seq or count; not used", self.path)
            return None
        return meta

    def describe(self, seq: int, count: int, **extra: Any) -> None:
        """Write the description of the file just written (renamed into place)."""
        stat = self.path.stat()
        meta = {
            "version": self.version,
            "model": self.model,
            "dim": self.dim,
            "seq": seq,
            "count": count,
            "bytes": stat.st_size,
            "mtime_ns": stat.st_mtime_ns,
            **extra,
        }
        partial = partial_path(self.meta_path)
        partial.write_text(json.dumps(meta), encoding="utf-8")
        os.replace(partial, self.meta_path)

    def forget(self) -> None:
        """Drop the description first: from then on the file is not used, whatever it holds."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.meta_path.unlink(missing_ok=True)

    def discard(self) -> None:
        self.meta_path.unlink(missing_ok=True)
        self.path.unlink(missing_ok=True)


@dataclass(frozen=True)
class GraphFile(SavedFile):
    """One space's HNSW graph (float16 vectors: a graph of another format is rebuilt)."""

    def load(self) -> tuple[HnswGraph, int] | None:
        """The saved graph and its ``seq``; None (and why, in the log) when it cannot be used."""
        meta = self.described()
        if meta is None:
            return None
        try:
            graph = HnswGraph.load(self.path, self.dim)
        except ValueError as exc:
            log.warning("graph %s: %s; rebuilding", self.path, exc)
            return None
        if len(graph) != meta["count"]:
            log.warning("graph %s holds %d rows, not %s; rebuilding", self.path, len(graph), meta)
            return None
        return graph, int(meta["seq"])

    def save(self, graph: HnswGraph, seq: int) -> None:
        """Write the graph, then its description (a crash between leaves it unused)."""
        self.forget()
        partial = partial_path(self.path)
        graph.save(partial)
        os.replace(partial, self.path)
        self.describe(seq, len(graph))


@dataclass(frozen=True)
class SavedRows:
    """A rows file whose description fits: its rows, room for more, and up to which ``seq``."""

    file: RowsFile
    count: int
    capacity: int
    seq: int

    def columns(self) -> IndexColumns | None:
        """The columns, ``capacity`` long of which ``count`` are rows; None when the file
        cannot be read.

        The vectors are mapped from the file, copy-on-write: a page is read when a
        search first scores a row on it, and a row written after the load stays in
        this process. A million rows start without reading 1.5 GB, and only the
        pages searches touch count in the process's memory.
        """
        from memoryd.store.index_arrays import IndexColumns

        ints = [np.empty(self.capacity, np.int64) for _ in range(INT_COLUMNS)]
        try:
            with self.file.path.open("rb") as fh:
                for array in ints:
                    if fh.readinto(array[: self.count].data.cast("B")) != self.count * 8:
                        return None
            vectors = np.memmap(
                self.file.path,
                dtype=np.float32,
                mode="c",
                offset=INT_COLUMNS * 8 * self.count,
                shape=(self.capacity, self.file.dim),
            )
        except (OSError, ValueError) as exc:
            log.warning("rows %s: %s; reading the rows from the database", self.file.path, exc)
            return None
        rowids, seqs, ends, starts, created, kinds = ints
        return IndexColumns(rowids, vectors, ends, starts, created, seqs, kinds)


@dataclass(frozen=True)
class RowsFile(SavedFile):
    """One space's live rows as the index holds them: what a new process loads instead of
    walking every row of the space in SQLite.

    Raw columns, one after the other: rowids, seqs, ends, starts, created,
    kinds (int64 each, one a row), then the vectors (float32, ``dim`` a row) and
    room for ``SPARE`` more vectors, a hole in the file that takes no disk
    (so that a process mapping it writes its first new rows in place). The
    description gives the count, the capacity and the memory types that the
    kinds number (``KIND_NAMES``).
    """

    version: ClassVar[int] = 3

    def open(self, token: str | None) -> SavedRows | None:
        """The saved rows, if their description fits and the database vouches for them."""
        meta = self.described()
        if meta is None or token is None:
            return None
        if meta.get("token") != token:
            log.info("rows %s are not the ones this database saved; not used", self.path)
            return None
        if meta.get("kinds") != list(KIND_NAMES):
            log.info("rows %s number other memory types; not used", self.path)
            return None
        count, capacity = int(meta["count"]), meta.get("capacity")
        if not isinstance(capacity, int) or capacity < count:
            log.warning("rows %s: no capacity in the description; not used", self.path)
            return None
        # described() checked that the file is meta["bytes"] long
        if meta["bytes"] != INT_COLUMNS * 8 * count + 4 * self.dim * capacity:
            log.warning("rows %s are not %d rows long; not used", self.path, count)
            return None
        return SavedRows(self, count, capacity, int(meta["seq"]))

    def save(self, columns: IndexColumns, seq: int) -> str:
        """Write the rows, then their description; the token the database must vouch for."""
        self.forget()
        partial = partial_path(self.path)
        count = int(columns.rowids.size)
        capacity = count + max(SPARE_MIN, count // SPARE_SHARE)
        with partial.open("wb") as fh:
            for array in _in_file_order(columns):
                fh.write(np.ascontiguousarray(array).data.cast("B"))
            fh.truncate(INT_COLUMNS * 8 * count + 4 * self.dim * capacity)  # room: a hole
        os.replace(partial, self.path)
        token = secrets.token_hex(16)
        self.describe(seq, count, token=token, capacity=capacity, kinds=list(KIND_NAMES))
        return token


def _in_file_order(columns: IndexColumns) -> list[npt.NDArray[Any]]:
    """The columns in the order a rows file holds them."""
    return [
        columns.rowids,
        columns.seqs,
        columns.ends,
        columns.starts,
        columns.created,
        columns.kinds,
        columns.vectors,
    ]
