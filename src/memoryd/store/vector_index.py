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

import hashlib
import logging
import math
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from memoryd.store.hnsw_index import DEFAULT_HNSW_THRESHOLD, GraphFile, HnswGraph

log = logging.getLogger(__name__)

NEVER = np.iinfo(np.int64).max
INITIAL_CAPACITY = 1024
# a saved graph is written again once this many of its rows changed (at most 1 % of them):
# a process that loads it patches at most that many rows before its first search
SAVE_ROWS = 5_000
# a saved graph that far behind the rows (this share of them to patch) is rebuilt instead
PATCH_FRACTION = 0.25
# with a graph, a filter that keeps less than this share of the rows is scored exactly over
# the rows it keeps; a wider one searches the graph for proportionally more candidates
EXACT_FILTER_FRACTION = 0.05


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


@dataclass
class IndexColumns:
    """Live rows as whole columns: how an empty index is loaded, without a row object each."""

    rowids: npt.NDArray[np.int64]
    vectors: npt.NDArray[np.float32]  # (rows, dim)
    ends: npt.NDArray[np.int64]  # the end of each row's validity, NEVER when open-ended
    starts: npt.NDArray[np.int64]  # its start, -NEVER when it always held
    created: npt.NDArray[np.int64]
    seqs: npt.NDArray[np.int64]


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
    # when each row was created (microseconds): a time window is filtered here, not in SQL
    created: npt.NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, np.int64))
    position: dict[int, int] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    # the approximate graph over every row above, while the space is large
    graph: HnswGraph | None = None
    # where the graph is kept between processes (None: rebuilt by every process)
    graph_file: GraphFile | None = None
    # how the current graph came to be: "built", "loaded" from graph_file, or "" (none)
    graph_origin: str = ""
    unsaved: int = 0  # rows changed in the graph since it was last saved

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
        if self.size:
            rowids[: self.size] = self.rowids[: self.size]
            matrix[: self.size] = self.matrix[: self.size]
            ends[: self.size] = self.ends[: self.size]
            starts[: self.size] = self.starts[: self.size]
            created[: self.size] = self.created[: self.size]
        self.rowids, self.matrix, self.ends, self.starts = rowids, matrix, ends, starts
        self.created = created

    def apply(self, rows: list[IndexRow], seq: int | None = None) -> None:
        """Upsert live rows, drop dead ones; ``seq``: the store's counter they bring it to.

        Callers hold ``lock``.
        """
        self.apply_batches([rows], seq, len(rows))

    def apply_batches(
        self, batches: Iterable[list[IndexRow]], seq: int | None = None, total: int = 0
    ) -> None:
        """``apply`` over rows that come in batches (``total`` of them, or about): a space
        loaded from the store never holds every row object at once, only its arrays.

        Callers hold ``lock``.
        """
        self._grow(self.size + total)
        # with a graph: the rowids it must drop, and those it must (re)insert
        track = self.graph is not None
        stale: list[int] = []
        fresh: list[int] = []
        written: list[npt.NDArray[np.int64]] = []  # (rowid, seq) of each row, for a saved graph
        for rows in batches:
            self._grow(self.size + len(rows))
            written.append(
                np.array([(r.rowid, -1 if r.seq is None else r.seq) for r in rows], np.int64)
            )
            for row in rows:
                self._upsert(row, track, stale, fresh)
        pairs = np.concatenate(written).reshape(-1, 2) if written else np.zeros((0, 2), np.int64)
        self._update_graph(stale, fresh, pairs, seq)
        if seq is not None:
            self._caught_up(seq)

    def load(self, batches: Iterable[IndexColumns], seq: int, total: int = 0) -> None:
        """Fill an empty index with live rows, a batch of columns at a time (``total`` rows,
        or about); then build the graph, or load the saved one, as ``apply`` would.

        A million rows go in as a few hundred array copies instead of a million
        row objects, and a saved graph is read from disk while they do. Callers
        hold ``lock``.
        """
        if self.size or self.graph is not None:
            raise ValueError("load() fills an empty index; apply() updates one")
        large = self.hnsw_threshold is not None and total > self.hnsw_threshold
        with ThreadPoolExecutor(max_workers=1) as pool:
            prefetch = pool.submit(self.graph_file.load) if large and self.graph_file else None
            self._grow(total)
            written: list[npt.NDArray[np.int64]] = []
            for cols in batches:
                n = cols.rowids.size
                self._grow(self.size + n)
                at = slice(self.size, self.size + n)
                self.rowids[at] = cols.rowids
                self.matrix[at] = cols.vectors
                self.ends[at] = cols.ends
                self.starts[at] = cols.starts
                self.created[at] = cols.created
                self.size += n
                written.append(np.stack([cols.rowids, cols.seqs], axis=1))
            self.position = dict(
                zip(self.rowids[: self.size].tolist(), range(self.size), strict=True)
            )
            pairs = np.concatenate(written) if written else np.zeros((0, 2), np.int64)
            self._update_graph([], [], pairs, seq, None if prefetch is None else prefetch.result)
        self._caught_up(seq)

    def _caught_up(self, seq: int) -> None:
        """The index holds every write up to ``seq``: keep the graph if enough changed."""
        self.seq = seq
        if self.save_due():
            self.save()

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
        ends = [t for t in (row.invalidated_at, row.valid_to, row.expires_at) if t is not None]
        self.ends[at] = min(ends) if ends else NEVER
        self.starts[at] = -NEVER if row.valid_from is None else row.valid_from
        self.created[at] = row.created_at

    def _update_graph(
        self,
        stale: list[int],
        fresh: list[int],
        written: npt.NDArray[np.int64],
        seq: int | None,
        saved: Callable[[], tuple[HnswGraph, int] | None] | None = None,
    ) -> None:
        """Build (or load), update or drop the HNSW graph to match the rows now held.

        ``saved``: what reads the saved graph, when it is being read already.
        """
        threshold = self.hnsw_threshold
        if self.graph is not None and (threshold is None or self.size < threshold // 2):
            self.graph, self.graph_origin = None, ""  # small again: the exact scan is as fast
            if self.graph_file is not None:
                self.graph_file.discard()
        if self.graph is not None:
            self.graph.remove(np.asarray(stale, np.int64))
            picks = np.fromiter((self.position[r] for r in fresh), np.int64, len(fresh))
            self.graph.add(self.rowids[picks], self.matrix[picks])
            self.unsaved += len(set(stale) | set(fresh))
        elif threshold is not None and self.size > threshold:
            self.graph = self._saved_graph(written, seq, saved)
            if self.graph is None:
                self.graph, self.graph_origin = HnswGraph(self.dim), "built"
                self.graph.add(self.rowids[: self.size], self.matrix[: self.size])
                self.unsaved = self.size

    def _saved_graph(
        self,
        written: npt.NDArray[np.int64],
        seq: int | None,
        saved: Callable[[], tuple[HnswGraph, int] | None] | None = None,
    ) -> HnswGraph | None:
        """The graph saved by an earlier process, patched up to the rows now held; None when
        there is none or it is too far behind (``PATCH_FRACTION``) to be worth patching."""
        if saved is None and self.graph_file is not None:
            saved = self.graph_file.load
        found = None if saved is None else saved()
        if found is None:
            return None
        graph, saved_seq = found
        if seq is not None and saved_seq > seq:  # the database went back (a restored backup)
            log.warning("graph %s is newer than the database; rebuilding", self.graph_file)
            return None
        # each of these holds a rowid once: set operations by sorting, not by hashing
        live = self.rowids[: self.size]
        keys = graph.keys()
        rewritten = np.unique(written[written[:, 1] > saved_seq, 0])
        # written since the save: maybe a new vector
        redo = np.intersect1d(rewritten, keys, assume_unique=True)
        gone = np.setdiff1d(keys, live, assume_unique=True)  # deleted, archived or invalidated
        add = np.union1d(
            np.setdiff1d(live, keys, assume_unique=True),
            np.intersect1d(redo, live, assume_unique=True),
        )
        if gone.size + add.size > PATCH_FRACTION * self.size:
            log.info("graph %s is too far behind the rows; rebuilding", self.graph_file)
            return None
        graph.remove(np.union1d(gone, redo))
        picks = np.fromiter((self.position[int(r)] for r in add), np.int64, add.size)
        graph.add(self.rowids[picks], self.matrix[picks])
        self.graph_origin, self.unsaved = "loaded", int(gone.size + add.size)
        log.info("graph %s loaded; %d rows patched", self.graph_file, gone.size + add.size)
        return graph

    def save_due(self) -> bool:
        """Enough rows changed since the last save (``SAVE_ROWS``, at most 1 % of them)."""
        return self.unsaved >= max(1, min(SAVE_ROWS, self.size // 100))

    def save(self) -> None:
        """Keep the graph for the next process, if it changed; a failure is only logged.

        Callers hold ``lock``.
        """
        if self.graph is None or self.graph_file is None or not self.unsaved:
            return
        try:
            self.graph_file.save(self.graph, self.seq)
        except (OSError, RuntimeError) as exc:  # the next process builds it again
            log.warning("cannot save graph %s: %s", self.graph_file.path, exc)
            return
        self.unsaved = 0

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
            self.position[moved] = at
        del self.position[removed]
        self.size = last

    def search(
        self,
        query: npt.NDArray[np.float32],
        k: int,
        live_at: int | None = None,
        allowed: npt.NDArray[np.int64] | None = None,
        created: tuple[int | None, int | None] = (None, None),
    ) -> list[tuple[int, float]]:
        """Top ``k`` (rowid, cosine) pairs, best first.

        ``live_at`` keeps the rows valid at that instant; ``created`` the rows
        created in [after, before) (microseconds, None: open), which the index
        knows itself, so a time window needs no SQL over the rows it keeps.

        With a graph, the graph proposes candidates and they are scored
        exactly. A filter (``allowed``) that keeps few rows is scored exactly
        over those rows alone; a wider one asks the graph for as many more
        candidates as it keeps fewer rows. Only when too few candidates pass
        are the rows scanned exactly.
        """
        if self.size == 0 or k <= 0:
            return []
        narrow = allowed is not None and allowed.size < EXACT_FILTER_FRACTION * self.size
        if self.graph is not None and not narrow:
            found = self._search_graph(query, k, live_at, allowed, created)
            if found is not None:
                return found
        rowids = self.rowids[: self.size]
        if allowed is not None and narrow and self.graph is not None:
            # a few rows of a large space: found by position, not by a pass over them all
            picks = np.fromiter(
                (self.position.get(int(r), -1) for r in allowed), np.int64, allowed.size
            )
            picks = picks[picks >= 0]
        elif allowed is not None:
            picks = np.flatnonzero(np.isin(rowids, allowed, assume_unique=True))
        else:
            picks = None
        if picks is not None and picks.size == 0:
            return []
        at = slice(0, self.size) if picks is None else picks
        scores = self.matrix[at] @ query
        keep = self._keep(at, live_at, created)
        if keep is not None:
            scores = np.where(keep, scores, -np.inf)
        k = min(k, scores.size)
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.argsort(-scores[top], kind="stable")]
        ids = self.rowids[at]
        return [(int(ids[i]), float(scores[i])) for i in top if np.isfinite(scores[i])]

    def _keep(
        self,
        at: slice | npt.NDArray[np.int64],
        live_at: int | None,
        created: tuple[int | None, int | None],
    ) -> npt.NDArray[np.bool_] | None:
        """Which of the rows at ``at`` pass the validity and creation windows (None: all)."""
        keep: npt.NDArray[np.bool_] | None = None
        if live_at is not None:
            keep = (self.ends[at] > live_at) & (self.starts[at] <= live_at)
        after, before = created
        if after is not None:
            since = self.created[at] >= after
            keep = since if keep is None else keep & since
        if before is not None:
            until = self.created[at] < before
            keep = until if keep is None else keep & until
        return keep

    def _search_graph(
        self,
        query: npt.NDArray[np.float32],
        k: int,
        live_at: int | None,
        allowed: npt.NDArray[np.int64] | None = None,
        created: tuple[int | None, int | None] = (None, None),
    ) -> list[tuple[int, float]] | None:
        """Top ``k`` by the graph, or None when fewer than ``k`` live rows came back."""
        assert self.graph is not None
        wanted = max(4 * k, k + 64)
        if allowed is not None:  # a filter keeping 1/n of the rows: n times the candidates
            wanted = math.ceil(wanted * self.size / max(allowed.size, 1))
        candidates = self.graph.search(query, min(wanted, self.size))
        if allowed is not None:
            candidates = candidates[np.isin(candidates, allowed)]
        picks = np.fromiter(
            (self.position.get(int(r), -1) for r in candidates), np.int64, len(candidates)
        )
        picks = picks[picks >= 0]  # the graph is kept in step; this is a guard
        keep = self._keep(picks, live_at, created)
        if keep is not None:
            picks = picks[keep]
        if picks.size < k:
            return None
        scores = self.matrix[picks] @ query
        top = np.argsort(-scores, kind="stable")[:k]
        return [(int(self.rowids[picks[i]]), float(scores[i])) for i in top]


class VectorIndex:
    """All space indexes of one store, keyed by space (a team space has many writers)."""

    def __init__(
        self,
        dim: int,
        hnsw_threshold: int | None = DEFAULT_HNSW_THRESHOLD,
        graph_dir: Path | None = None,
        model: str = "",
    ) -> None:
        """``graph_dir``: where the spaces' graphs are kept between processes (None: not)."""
        self.dim = dim
        self.hnsw_threshold = hnsw_threshold
        self.graph_dir = graph_dir
        self.model = model
        self._spaces: dict[str, SpaceIndex] = {}
        self._lock = threading.Lock()

    def space(self, space_id: str) -> SpaceIndex:
        with self._lock:
            if space_id not in self._spaces:
                self._spaces[space_id] = SpaceIndex(
                    dim=self.dim,
                    hnsw_threshold=self.hnsw_threshold,
                    graph_file=self._graph_file(space_id),
                )
            return self._spaces[space_id]

    def _graph_file(self, space_id: str) -> GraphFile | None:
        if self.graph_dir is None:
            return None
        name = hashlib.sha256(space_id.encode()).hexdigest()[:32]  # any space id, a safe name
        return GraphFile(self.graph_dir / f"{name}.usearch", self.model, self.dim)

    def save(self) -> None:
        """Keep every graph that changed enough since its last save (``SAVE_ROWS``)."""
        with self._lock:
            spaces = list(self._spaces.values())
        for space in spaces:
            with space.lock:
                if space.save_due():
                    space.save()

    def clear(self) -> None:
        with self._lock:
            self._spaces.clear()

    def stats(self) -> dict[str, Any]:
        with self._lock:
            return {space_id: idx.size for space_id, idx in self._spaces.items()}
