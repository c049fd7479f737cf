"""The columns of a space's vector index: one row per live memory, in parallel arrays.

:class:`SpaceArrays` owns the arrays and their bookkeeping (growth, the
position of each rowid, swap-removal); :class:`memoryd.store.vector_index.SpaceIndex`
builds the search, the graph and the saving on top of it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from memoryd.store.index_kinds import UNKNOWN_KIND

NEVER = np.iinfo(np.int64).max
INITIAL_CAPACITY = 1024


@dataclass
class IndexRow:
    rowid: int
    vector: npt.NDArray[np.float32] | None
    alive: bool  # False: archived, deleted, or no vector
    invalidated_at: int | None
    valid_to: int | None
    expires_at: int | None
    valid_from: int | None = None
    seq: int | None = None  # the store's change counter at the row's last write
    created_at: int = 0  # microseconds: a search's created_after/created_before window
    kind: int = UNKNOWN_KIND  # KIND_CODES of its memory type


@dataclass
class IndexColumns:
    """Live rows as whole columns: how an empty index is loaded, without a row object each."""

    rowids: npt.NDArray[np.int64]
    vectors: npt.NDArray[np.float32]  # (rows, dim)
    ends: npt.NDArray[np.int64]  # the end of each row's validity, NEVER when open-ended
    starts: npt.NDArray[np.int64]  # its start, -NEVER when it always held
    created: npt.NDArray[np.int64]
    seqs: npt.NDArray[np.int64]
    kinds: npt.NDArray[np.int64]


@dataclass
class SpaceArrays:
    """The rows of one space as columns; only ``[:size]`` of each array is in use."""

    dim: int
    size: int = 0
    rowids: npt.NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, np.int64))
    matrix: npt.NDArray[np.float32] = field(default_factory=lambda: np.zeros((0, 0), np.float32))
    # the end of each row's validity (microseconds), NEVER when open-ended
    ends: npt.NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, np.int64))
    # the start of each row's validity, -NEVER when it always held
    starts: npt.NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, np.int64))
    # when each row was created (microseconds): a time window is filtered here, not in SQL
    created: npt.NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, np.int64))
    # the store's change counter at each row's last write (-1: not known)
    seqs: npt.NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, np.int64))
    # each row's memory type (KIND_CODES): a search for some types is filtered here
    kinds: npt.NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, np.int64))
    position: dict[int, int] = field(default_factory=dict)
    # while a graph is built aside over these arrays as they are: the rows a removal moved
    # to another position since (the build may have read another row's vector for them)
    moved: set[int] | None = None

    def _grow(self, need: int) -> None:
        capacity = max(INITIAL_CAPACITY, len(self.rowids))
        while capacity < need:
            capacity *= 2
        if capacity == len(self.rowids):
            return
        # empty, not zeros: only [:size] is ever read, and NumPy backs a large empty array
        # with huge pages where zeros faults in 4 KiB pages (1.4 s against 0.15 s to fill
        # a million rows)
        rowids = np.empty(capacity, np.int64)
        matrix = np.empty((capacity, self.dim), np.float32)
        ends = np.empty(capacity, np.int64)
        starts = np.empty(capacity, np.int64)
        created = np.empty(capacity, np.int64)
        seqs = np.empty(capacity, np.int64)
        kinds = np.empty(capacity, np.int64)
        if self.size:
            rowids[: self.size] = self.rowids[: self.size]
            matrix[: self.size] = self.matrix[: self.size]
            ends[: self.size] = self.ends[: self.size]
            starts[: self.size] = self.starts[: self.size]
            created[: self.size] = self.created[: self.size]
            seqs[: self.size] = self.seqs[: self.size]
            kinds[: self.size] = self.kinds[: self.size]
        self.rowids, self.matrix, self.ends, self.starts = rowids, matrix, ends, starts
        self.created, self.seqs, self.kinds = created, seqs, kinds

    def _adopt(self, columns: IndexColumns, size: int) -> None:
        """Hold ``columns`` as they are (their length: the capacity), ``size`` rows in use."""
        self.rowids, self.matrix, self.seqs = columns.rowids, columns.vectors, columns.seqs
        self.ends, self.starts, self.created = columns.ends, columns.starts, columns.created
        self.kinds = columns.kinds
        self.size = size

    def _index_positions(self) -> None:
        """Where each rowid's row is, once the arrays were filled whole."""
        self.position = dict(zip(self.rowids[: self.size].tolist(), range(self.size), strict=True))

    def columns(self, at: slice) -> IndexColumns:
        """Views of the rows at ``at``: what a rows file is read into and written from."""
        return IndexColumns(
            rowids=self.rowids[at],
            vectors=self.matrix[at],
            ends=self.ends[at],
            starts=self.starts[at],
            created=self.created[at],
            seqs=self.seqs[at],
            kinds=self.kinds[at],
        )

    def _remove(self, at: int) -> None:
        last = self.size - 1
        removed = int(self.rowids[at])
        if at != last:
            moved = int(self.rowids[last])
            self.rowids[at] = moved
            self.matrix[at] = self.matrix[last]
            self.ends[at] = self.ends[last]
            self.starts[at] = self.starts[last]
            self.created[at] = self.created[last]
            self.seqs[at] = self.seqs[last]
            self.kinds[at] = self.kinds[last]
            self.position[moved] = at
            if self.moved is not None:
                self.moved.add(moved)
        del self.position[removed]
        self.size = last

    def _upsert_batches(
        self, batches: Iterable[list[IndexRow]], track: bool, stale: list[int], fresh: list[int]
    ) -> int:
        """Upsert every row of ``batches``; how many there were."""
        applied = 0
        for rows in batches:
            self._grow(self.size + len(rows))
            for row in rows:
                self._upsert(row, track, stale, fresh)
            applied += len(rows)
        return applied

    def _upsert(self, row: IndexRow, track: bool, stale: list[int], fresh: list[int]) -> None:
        at = self.position.get(row.rowid)
        if not row.alive or row.vector is None:
            if at is not None:
                self._remove(at)
                if track:
                    stale.append(row.rowid)
            return
        if at is None:
            at = self.size
            self.size += 1
            self.position[row.rowid] = at
            self.rowids[at] = row.rowid
            if track:
                fresh.append(row.rowid)
        elif track and not np.array_equal(self.matrix[at], row.vector):
            stale.append(row.rowid)  # re-embedded: the graph holds the old vector
            fresh.append(row.rowid)
        self.matrix[at] = row.vector
        self.seqs[at] = -1 if row.seq is None else row.seq
        ends = [t for t in (row.invalidated_at, row.valid_to, row.expires_at) if t is not None]
        self.ends[at] = min(ends) if ends else NEVER
        self.starts[at] = -NEVER if row.valid_from is None else row.valid_from
        self.created[at] = row.created_at
        self.kinds[at] = row.kind
