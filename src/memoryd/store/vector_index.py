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

A large space also keeps its rows on disk beside the graph
(:mod:`memoryd.store.index_files`), so a new process reads one file and
catches up on what was written since instead of walking every row in SQLite.
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

from memoryd.store.hnsw_index import DEFAULT_HNSW_THRESHOLD, HnswGraph
from memoryd.store.index_arrays import (
    NEVER,
    IndexColumns,
    IndexRow,
    SpaceArrays,
)
from memoryd.store.index_files import GraphFile, RowsFile, SavedRows

log = logging.getLogger(__name__)

# a saved graph is written again once this many of its rows changed (at most 1 % of them):
# a process that loads it patches at most that many rows before its first search
SAVE_ROWS = 5_000
# a space this large keeps its rows on disk too: reading them from SQLite takes about 2 s
# at 200,000 rows (9 s at a million); below, the 1.6 KB a memory that the rows file adds to
# the home would buy less than that
ROWS_FILE_MIN = 200_000
# the rows are saved again once this share of them changed (at least SAVE_ROWS): less often
# than the graph, whose patch at a start costs far more a row than catching the rows up
ROWS_SAVE_SHARE = 20
# a saved graph that far behind the rows (this share of them to patch) is rebuilt instead
PATCH_FRACTION = 0.25
# with a graph, a filter that keeps less than this share of the rows is scored exactly over
# the rows it keeps; a wider one searches the graph for proportionally more candidates
EXACT_FILTER_FRACTION = 0.05


@dataclass
class SpaceIndex(SpaceArrays):
    """Cosine search over unit vectors of one space: exact, or HNSW when large."""

    # past this many vectors the space keeps an HNSW graph; None: always exact
    hnsw_threshold: int | None = None
    seq: int = -1
    lock: threading.Lock = field(default_factory=threading.Lock)
    # the approximate graph over every row above, while the space is large
    graph: HnswGraph | None = None
    # where the graph is kept between processes (None: rebuilt by every process)
    graph_file: GraphFile | None = None
    # where the rows are kept between processes, while the space has a graph
    rows_file: RowsFile | None = None
    # how the current graph came to be: "built", "loaded" from graph_file, or "" (none)
    graph_origin: str = ""
    unsaved: int = 0  # rows changed since the graph was last saved
    rows_unsaved: int = 0  # and since the rows were
    # how the rows were first filled: "saved" from rows_file, "store" from the rows, or ""
    rows_origin: str = ""

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
        applied = self._upsert_batches(batches, track, stale, fresh)
        self._update_graph(stale, fresh, seq)
        if track:
            self.unsaved += applied
            self.rows_unsaved += applied
        if seq is not None:
            self.seq = seq

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
            for cols in batches:
                n = cols.rowids.size
                self._grow(self.size + n)
                at = self.columns(slice(self.size, self.size + n))
                at.rowids[:], at.vectors[:], at.seqs[:] = cols.rowids, cols.vectors, cols.seqs
                at.ends[:], at.starts[:], at.created[:] = cols.ends, cols.starts, cols.created
                self.size += n
            self._index_positions()
            self._update_graph([], [], seq, None if prefetch is None else prefetch.result)
        self.seq, self.rows_origin = seq, "store"
        if self.graph is not None and self.rows_file is not None and self.size >= ROWS_FILE_MIN:
            self.rows_unsaved = self.size  # none on disk that the store vouches for

    def load_saved(
        self,
        saved: SavedRows,
        newest: int,
        written_since: Callable[[int], Iterable[list[IndexRow]]],
    ) -> bool:
        """Fill an empty index from a rows file and ``written_since(saved.seq)``, the rows
        written since up to ``newest``, the store's counter now; False (the index still
        empty) when the file cannot be read whole.

        The saved graph is read meanwhile and patched last, once, for every row
        that changed since it was saved: the graph is saved more often than the
        rows (``ROWS_SAVE_SHARE``), and patching it against the rows as saved
        would drop what the rows written since bring back. Callers hold ``lock``.
        """
        if self.size or self.graph is not None:
            raise ValueError("load_saved() fills an empty index; apply() updates one")
        with ThreadPoolExecutor(max_workers=1) as pool:
            prefetch = pool.submit(self.graph_file.load) if self.graph_file else None
            columns = saved.columns()
            if columns is None:
                return False
            self._adopt(columns, saved.count)
            self._index_positions()
            caught_up = self._upsert_batches(written_since(saved.seq), False, [], [])
            self._update_graph([], [], newest, None if prefetch is None else prefetch.result)
        self.seq, self.rows_origin = newest, "saved"
        self.rows_unsaved = caught_up
        return True

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

    def _update_graph(
        self,
        stale: list[int],
        fresh: list[int],
        newest: int | None,
        saved: Callable[[], tuple[HnswGraph, int] | None] | None = None,
    ) -> None:
        """Build (or load), update or drop the HNSW graph to match the rows now held.

        ``newest``: the store's counter now (a saved graph past it is not used);
        ``saved``: what reads the saved graph, when it is being read already.
        """
        threshold = self.hnsw_threshold
        if self.graph is not None and (threshold is None or self.size < threshold // 2):
            self.graph, self.graph_origin = None, ""  # small again: the exact scan is as fast
            for kept in (self.graph_file, self.rows_file):
                if kept is not None:
                    kept.discard()
        if self.graph is not None:
            self.graph.remove(np.asarray(stale, np.int64))
            picks = np.fromiter((self.position[r] for r in fresh), np.int64, len(fresh))
            self.graph.add(self.rowids[picks], self.matrix[picks])
        elif threshold is not None and self.size > threshold:
            self.graph = self._saved_graph(newest, saved)
            if self.graph is None:
                self.graph, self.graph_origin = HnswGraph(self.dim), "built"
                self.graph.add(self.rowids[: self.size], self.matrix[: self.size])
                self.unsaved = self.size

    def _saved_graph(
        self, newest: int | None, saved: Callable[[], tuple[HnswGraph, int] | None] | None = None
    ) -> HnswGraph | None:
        """The graph saved by an earlier process, patched up to the rows now held; None when
        there is none or it is too far behind (``PATCH_FRACTION``) to be worth patching."""
        if saved is None and self.graph_file is not None:
            saved = self.graph_file.load
        found = None if saved is None else saved()
        if found is None:
            return None
        graph, saved_seq = found
        if newest is not None and saved_seq > newest:  # the database went back (a backup)
            log.warning("graph %s is newer than the database; rebuilding", self.graph_file)
            return None
        # each of these holds a rowid once: set operations by sorting, not by hashing
        live = self.rowids[: self.size]
        keys = graph.keys()
        # written since the save: maybe a new vector
        redo = np.intersect1d(live[self.seqs[: self.size] > saved_seq], keys, assume_unique=True)
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
        """Enough rows changed since the graph was saved (``SAVE_ROWS``, at most 1 % of
        them), or since the rows were (``ROWS_SAVE_SHARE``)."""
        return self.unsaved >= max(1, min(SAVE_ROWS, self.size // 100)) or self._rows_due()

    def _rows_due(self) -> bool:
        return (
            self.rows_file is not None
            and self.size >= ROWS_FILE_MIN
            # all of them when none are on disk, however few
            and self.rows_unsaved >= min(self.size, max(SAVE_ROWS, self.size // ROWS_SAVE_SHARE))
        )

    def save(self) -> str | None:
        """Keep the graph and the rows for the next process, if they changed; a failure is
        only logged (the next process reads the rows from the store).

        Returns the token of the rows file written, which the store records so
        that only it is read back (``RowsFile``); None when none was written.
        Callers hold ``lock``.
        """
        if self.graph is None or self.graph_file is None:
            return None
        token = None
        try:
            if self.unsaved:
                self.graph_file.save(self.graph, self.seq)
                self.unsaved = 0
            if self.rows_file is not None and self.size < ROWS_FILE_MIN:
                self.rows_file.discard()
            elif self.rows_file is not None and self._rows_due():
                token = self.rows_file.save(self.columns(slice(0, self.size)), self.seq)
                self.rows_unsaved = 0
                # map the file just written: the pages the save read, and the old file, go
                saved = self.rows_file.open(token)
                columns = None if saved is None else saved.columns()
                if columns is not None:
                    self._adopt(columns, self.size)
        except (OSError, RuntimeError) as exc:
            log.warning("cannot save the index of %s: %s", self.graph_file.path, exc)
        return token

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
        """``graph_dir``: where the large spaces' graphs and rows are kept between processes
        (None: not)."""
        self.dim = dim
        self.hnsw_threshold = hnsw_threshold
        self.graph_dir = graph_dir
        self.model = model
        self._spaces: dict[str, SpaceIndex] = {}
        self._lock = threading.Lock()

    def space(self, space_id: str) -> SpaceIndex:
        with self._lock:
            if space_id not in self._spaces:
                space = SpaceIndex(dim=self.dim, hnsw_threshold=self.hnsw_threshold)
                if self.graph_dir is not None:
                    # any space id, a safe file name
                    stem = self.graph_dir / hashlib.sha256(space_id.encode()).hexdigest()[:32]
                    space.graph_file = GraphFile(stem.with_suffix(".usearch"), self.model, self.dim)
                    space.rows_file = RowsFile(stem.with_suffix(".rows"), self.model, self.dim)
                self._spaces[space_id] = space
            return self._spaces[space_id]

    def save(self) -> dict[str, str]:
        """Keep every space that changed enough since its last save (``SAVE_ROWS``); the
        token of each rows file written, by space (see ``SpaceIndex.save``)."""
        with self._lock:
            spaces = list(self._spaces.items())
        tokens: dict[str, str] = {}
        for space_id, space in spaces:
            with space.lock:
                token = space.save() if space.save_due() else None
            if token is not None:
                tokens[space_id] = token
        return tokens

    def clear(self) -> None:
        with self._lock:
            self._spaces.clear()

    def stats(self) -> dict[str, Any]:
        with self._lock:
            return {space_id: idx.size for space_id, idx in self._spaces.items()}
