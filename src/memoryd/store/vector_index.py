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

The layers, bottom up: the rows as columns (:mod:`memoryd.store.index_arrays`),
the graph and what is kept on disk between processes
(:mod:`memoryd.store.index_graph`, :mod:`memoryd.store.index_files`), and here
the updates and the search.
"""

from __future__ import annotations

import hashlib
import math
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from memoryd.store.hnsw_index import DEFAULT_HNSW_THRESHOLD
from memoryd.store.index_arrays import IndexRow
from memoryd.store.index_files import GraphFile, RowsFile
from memoryd.store.index_graph import SpaceGraph

# with a graph, a filter that keeps less than this share of the rows is scored exactly over
# the rows it keeps; a wider one searches the graph for proportionally more candidates
EXACT_FILTER_FRACTION = 0.05


@dataclass
class SpaceIndex(SpaceGraph):
    """Cosine search over unit vectors of one space: exact, or HNSW when large."""

    lock: threading.Lock = field(default_factory=threading.Lock)

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

    def search(
        self,
        query: npt.NDArray[np.float32],
        k: int,
        live_at: int | None = None,
        allowed: npt.NDArray[np.int64] | None = None,
        created: tuple[int | None, int | None] = (None, None),
        kinds: Sequence[int] | None = None,
    ) -> list[tuple[int, float]]:
        """Top ``k`` (rowid, cosine) pairs, best first.

        ``live_at`` keeps the rows valid at that instant; ``created`` the rows
        created in [after, before) (microseconds, None: open); ``kinds`` the
        rows of those memory types (``KIND_CODES``). The index knows all three
        itself, so they need no SQL over the rows they keep.

        With a graph, the graph proposes candidates and they are scored
        exactly. A filter (``allowed``, ``kinds``) that keeps few rows is scored
        exactly over those rows alone; a wider one asks the graph for as many
        more candidates as it keeps fewer rows. Only when too few candidates
        pass are the rows scanned exactly.
        """
        if self.size == 0 or k <= 0:
            return []
        of_kind = None if kinds is None else np.isin(self.kinds[: self.size], kinds)
        kept = self.size if allowed is None else allowed.size
        if of_kind is not None:
            kept = min(kept, int(np.count_nonzero(of_kind)))
        if kept == 0:
            return []
        narrow = kept < EXACT_FILTER_FRACTION * self.size
        if self.graph is not None and not narrow:
            found = self._search_graph(query, k, live_at, allowed, created, kinds, kept)
            if found is not None:
                return found
        rowids = self.rowids[: self.size]
        if (
            allowed is not None
            and allowed.size < EXACT_FILTER_FRACTION * self.size
            and self.graph is not None
        ):
            # a few rows of a large space: found by position, not by a pass over them all
            picks = np.fromiter(
                (self.position.get(int(r), -1) for r in allowed), np.int64, allowed.size
            )
            picks = picks[picks >= 0]
        elif allowed is not None:
            picks = np.flatnonzero(np.isin(rowids, allowed, assume_unique=True))
        else:
            picks = None
        if of_kind is not None:
            picks = np.flatnonzero(of_kind) if picks is None else picks[of_kind[picks]]
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
        kinds: Sequence[int] | None = None,
        kept: int | None = None,
    ) -> list[tuple[int, float]] | None:
        """Top ``k`` by the graph, or None when fewer than ``k`` live rows came back;
        ``kept``: how many rows ``allowed`` and ``kinds`` keep (None: every row)."""
        assert self.graph is not None
        wanted = max(4 * k, k + 64)
        if kept is not None:  # a filter keeping 1/n of the rows: n times the candidates
            wanted = math.ceil(wanted * self.size / max(kept, 1))
        candidates = self.graph.search(query, min(wanted, self.size))
        if allowed is not None:
            candidates = candidates[np.isin(candidates, allowed)]
        picks = np.fromiter(
            (self.position.get(int(r), -1) for r in candidates), np.int64, len(candidates)
        )
        picks = picks[picks >= 0]  # the graph is kept in step; this is a guard
        if kinds is not None:
            picks = picks[np.isin(self.kinds[picks], kinds)]
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

    def stop_building(self) -> None:
        """Stop every space's graph build aside (a closing store)."""
        with self._lock:
            spaces = list(self._spaces.values())
        for space in spaces:
            space.stop_building()

    def clear(self) -> None:
        self.stop_building()
        with self._lock:
            self._spaces.clear()

    def stats(self) -> dict[str, Any]:
        with self._lock:
            return {space_id: idx.size for space_id, idx in self._spaces.items()}
