"""The in-process vector index: a derived cache of the vectors stored in SQLite.

One exact index per (tenant, space): a float32 matrix searched with a single
matrix-vector product. It is rebuilt from the rows on first use after a
start, and caught up on every search by reading the rows whose ``seq`` is
newer than the last one seen, which is how writes by another process that
shares the database file become visible.

Past ``hnsw_threshold`` vectors a space also keeps an approximate HNSW graph
(:mod:`memoryd.store.hnsw_index`) that proposes candidates for unfiltered
searches; the exact arrays stay the source of truth and score them. The graph
is dropped again when the space shrinks below half the threshold.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from memoryd.store.hnsw_index import DEFAULT_HNSW_THRESHOLD, HnswGraph

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


@dataclass
class SpaceIndex:
    """Cosine search over unit vectors of one space: exact, or HNSW when large."""

    dim: int
    # past this many vectors the space keeps an HNSW graph; None: always exact
    hnsw_threshold: int | None = None
    seq: int = -1
    size: int = 0
    rowids: npt.NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, np.int64))
    matrix: npt.NDArray[np.float32] = field(default_factory=lambda: np.zeros((0, 0), np.float32))
    # the end of each row's validity (microseconds), NEVER when open-ended
    ends: npt.NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, np.int64))
    # the start of each row's validity, -NEVER when it always held
    starts: npt.NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, np.int64))
    position: dict[int, int] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    # the approximate graph over every row above, while the space is large
    graph: HnswGraph | None = None

    def _grow(self, need: int) -> None:
        capacity = max(INITIAL_CAPACITY, len(self.rowids))
        while capacity < need:
            capacity *= 2
        if capacity == len(self.rowids):
            return
        rowids = np.zeros(capacity, np.int64)
        matrix = np.zeros((capacity, self.dim), np.float32)
        ends = np.zeros(capacity, np.int64)
        starts = np.zeros(capacity, np.int64)
        if self.size:
            rowids[: self.size] = self.rowids[: self.size]
            matrix[: self.size] = self.matrix[: self.size]
            ends[: self.size] = self.ends[: self.size]
            starts[: self.size] = self.starts[: self.size]
        self.rowids, self.matrix, self.ends, self.starts = rowids, matrix, ends, starts

    def apply(self, rows: list[IndexRow]) -> None:
        """Upsert live rows, drop dead ones. Callers hold ``lock``."""
        self._grow(self.size + len(rows))
        # with a graph: the rowids it must drop, and those it must (re)insert
        track = self.graph is not None
        stale: list[int] = []
        fresh: list[int] = []
        for row in rows:
            at = self.position.get(row.rowid)
            if not row.alive or row.vector is None:
                if at is not None:
                    self._remove(at)
                    if track:
                        stale.append(row.rowid)
                continue
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
            ends = [t for t in (row.invalidated_at, row.valid_to, row.expires_at) if t is not None]
            self.ends[at] = min(ends) if ends else NEVER
            self.starts[at] = -NEVER if row.valid_from is None else row.valid_from
        self._update_graph(stale, fresh)

    def _update_graph(self, stale: list[int], fresh: list[int]) -> None:
        """Build, update or drop the HNSW graph to match the rows now held."""
        threshold = self.hnsw_threshold
        if self.graph is not None and (threshold is None or self.size < threshold // 2):
            self.graph = None  # small again: the exact scan is as fast and exact
        if self.graph is not None:
            self.graph.remove(np.asarray(stale, np.int64))
            picks = np.fromiter((self.position[r] for r in fresh), np.int64, len(fresh))
            self.graph.add(self.rowids[picks], self.matrix[picks])
        elif threshold is not None and self.size > threshold:
            self.graph = HnswGraph(self.dim)
            self.graph.add(self.rowids[: self.size], self.matrix[: self.size])

    def _remove(self, at: int) -> None:
        last = self.size - 1
        removed = int(self.rowids[at])
        if at != last:
            moved = int(self.rowids[last])
            self.rowids[at] = moved
            self.matrix[at] = self.matrix[last]
            self.ends[at] = self.ends[last]
            self.starts[at] = self.starts[last]
            self.position[moved] = at
        del self.position[removed]
        self.size = last

    def search(
        self,
        query: npt.NDArray[np.float32],
        k: int,
        live_at: int | None = None,
        allowed: npt.NDArray[np.int64] | None = None,
    ) -> list[tuple[int, float]]:
        """Top ``k`` (rowid, cosine) pairs, best first.

        With a graph and no ``allowed`` list, the graph proposes candidates and
        they are scored exactly; when too few of them are live, or ``allowed``
        narrows the rows (to few, as a rule), the rows are scanned exactly.
        """
        if self.size == 0 or k <= 0:
            return []
        if allowed is None and self.graph is not None:
            found = self._search_graph(query, k, live_at)
            if found is not None:
                return found
        rowids = self.rowids[: self.size]
        if allowed is not None:
            picks = np.flatnonzero(np.isin(rowids, allowed, assume_unique=True))
            if picks.size == 0:
                return []
            scores = self.matrix[picks] @ query
            ids = rowids[picks]
            ends, starts = self.ends[picks], self.starts[picks]
        else:
            scores = self.matrix[: self.size] @ query
            ids = rowids
            ends, starts = self.ends[: self.size], self.starts[: self.size]
        if live_at is not None:
            scores = np.where((ends > live_at) & (starts <= live_at), scores, -np.inf)
        k = min(k, scores.size)
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.argsort(-scores[top], kind="stable")]
        return [(int(ids[i]), float(scores[i])) for i in top if np.isfinite(scores[i])]

    def _search_graph(
        self, query: npt.NDArray[np.float32], k: int, live_at: int | None
    ) -> list[tuple[int, float]] | None:
        """Top ``k`` by the graph, or None when fewer than ``k`` live rows came back."""
        assert self.graph is not None
        candidates = self.graph.search(query, min(max(4 * k, k + 64), self.size))
        picks = np.fromiter(
            (self.position.get(int(r), -1) for r in candidates), np.int64, len(candidates)
        )
        picks = picks[picks >= 0]  # the graph is kept in step; this is a guard
        if live_at is not None:
            picks = picks[(self.ends[picks] > live_at) & (self.starts[picks] <= live_at)]
        if picks.size < k:
            return None
        scores = self.matrix[picks] @ query
        top = np.argsort(-scores, kind="stable")[:k]
        return [(int(self.rowids[picks[i]]), float(scores[i])) for i in top]


class VectorIndex:
    """All space indexes of one store, keyed by space (a team space has many writers)."""

    def __init__(self, dim: int, hnsw_threshold: int | None = DEFAULT_HNSW_THRESHOLD) -> None:
        self.dim = dim
        self.hnsw_threshold = hnsw_threshold
        self._spaces: dict[str, SpaceIndex] = {}
        self._lock = threading.Lock()

    def space(self, space_id: str) -> SpaceIndex:
        with self._lock:
            if space_id not in self._spaces:
                self._spaces[space_id] = SpaceIndex(
                    dim=self.dim, hnsw_threshold=self.hnsw_threshold
                )
            return self._spaces[space_id]

    def clear(self) -> None:
        with self._lock:
            self._spaces.clear()

    def stats(self) -> dict[str, Any]:
        with self._lock:
            return {space_id: idx.size for space_id, idx in self._spaces.items()}
