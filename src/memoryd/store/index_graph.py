"""A large space's HNSW graph, and its graph and rows kept on disk between processes.

:class:`SpaceGraph` builds or loads the graph over the arrays of
:class:`memoryd.store.index_arrays.SpaceArrays`, keeps it in step with them,
and saves both (:mod:`memoryd.store.index_files`) often enough that a new
process starts from them instead of from every row in SQLite. The search
itself is :class:`memoryd.store.vector_index.SpaceIndex`.
"""

from __future__ import annotations

import atexit
import logging
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from memoryd.store.hnsw_index import HnswGraph
from memoryd.store.index_arrays import IndexColumns, IndexRow, SpaceArrays
from memoryd.store.index_files import GraphFile, RowsFile, SavedRows
from memoryd.threads import cores

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
# a graph over more rows than this is built on a thread of its own, and the space scanned
# exactly meanwhile (about 6 ms at 100,000 rows on one core): the first search or add after
# a bulk load does not wait for the build (about a minute at 100,000 rows on two cores)
BUILD_ASIDE_ROWS = 20_000
# a build aside leaves a core to the searches it runs beside
BUILD_THREADS = max(1, cores() - 1)
# rows a build aside hands to the graph at a time; between two it
# may be stopped (a closing store waits for the batch in hand: well under a second)
BUILD_BATCH = 2_048


# builds aside still running: stopped before the interpreter ends, whoever forgot to close
_BUILDING: set[tuple[threading.Thread, threading.Event]] = set()


@atexit.register
def _stop_every_build() -> None:
    for thread, stop in list(_BUILDING):
        stop.set()
        thread.join()


@dataclass
class SpaceGraph(SpaceArrays):
    """The arrays of one space, with its graph while it is large, and what is kept on disk."""

    # past this many vectors the space keeps an HNSW graph; None: always exact
    hnsw_threshold: int | None = None
    seq: int = -1
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
    # the graph being built aside, over the rows as they were at a counter (None: stopped)
    aside: Future[tuple[HnswGraph, int] | None] | None = field(default=None, repr=False)
    _builder: tuple[threading.Thread, threading.Event] | None = field(default=None, repr=False)

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
                at.kinds[:] = cols.kinds
                self.size += n
            self._index_positions()
            self._update_graph([], [], seq, None if prefetch is None else prefetch.result)
        self.seq, self.rows_origin = seq, "store"
        if self.graph is not None:
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
        self.adopt_built()
        if self.graph is not None and (threshold is None or self.size < threshold // 2):
            self.graph, self.graph_origin = None, ""  # small again: the exact scan is as fast
            for kept in (self.graph_file, self.rows_file):
                if kept is not None:
                    kept.discard()
        if self.graph is not None:
            self.graph.remove(np.asarray(stale, np.int64))
            picks = np.fromiter((self.position[r] for r in fresh), np.int64, len(fresh))
            self.graph.add(self.rowids[picks], self.matrix[picks])
        elif threshold is not None and self.size > threshold and self.aside is None:
            self.graph = self._saved_graph(newest, saved)
            if self.graph is None and self.size > BUILD_ASIDE_ROWS and newest is not None:
                self._build_aside(newest)
            elif self.graph is None:
                self.graph, self.graph_origin = HnswGraph(self.dim), "built"
                self.graph.add(self.rowids[: self.size], self.matrix[: self.size])
                self.unsaved = self.size

    def _build_aside(self, seq: int) -> None:
        """Build the graph over the rows as they are now (at counter ``seq``) on a thread of
        its own; :meth:`adopt_built` takes it in once done. Only the row ids are copied:
        the vectors are read where they lie, and what moves meanwhile is noted."""
        # the row ids as they are now, the vectors where they are: a row written since is
        # patched by its counter, one a removal moves by ``moved``, when the graph is taken in
        rowids = self.rowids[: self.size].copy()
        vectors = self.matrix[: self.size]  # a view, not a copy
        self.moved = set()
        done: Future[tuple[HnswGraph, int] | None] = Future()
        stop = threading.Event()

        def build() -> None:
            try:
                graph = HnswGraph(self.dim)
                for start in range(0, rowids.size, BUILD_BATCH):
                    if stop.is_set():
                        done.set_result(None)
                        return
                    at = slice(start, start + BUILD_BATCH)
                    graph.add(rowids[at], vectors[at], threads=BUILD_THREADS)
                done.set_result((graph, seq))
            except BaseException as exc:  # handed to whoever adopts it
                done.set_exception(exc)
            finally:
                _BUILDING.discard(builder)

        self.aside = done
        thread = threading.Thread(target=build, name="memoryd-graph-build", daemon=True)
        builder = self._builder = (thread, stop)
        _BUILDING.add(builder)
        thread.start()
        log.info("building the graph of %d rows aside", rowids.size)

    def stop_building(self) -> None:
        """Stop a build aside and wait for the batch in hand: a process must not end while
        the native library is inside one. The next process builds or loads its own."""
        if self._builder is not None:
            thread, stop = self._builder
            stop.set()
            thread.join()
            self._builder = self.aside = None
            self.moved = None

    def adopt_built(self) -> None:
        """Take in the graph built aside, once done, patched up to the rows now held (as a
        saved one is); a failed build is logged, and the space stays exact until the next
        write tries again. Callers hold ``lock``."""
        aside = self.aside
        if aside is None or not aside.done():
            return
        self.aside = self._builder = None
        moved, self.moved = self.moved or set(), None
        try:
            built = aside.result()
        except Exception as exc:
            log.warning("the graph build failed: %s", exc)
            return
        if built is None:  # stopped
            return
        threshold = self.hnsw_threshold
        if self.graph is not None or threshold is None or self.size <= threshold:
            return
        self.graph = self._saved_graph(None, lambda: built, moved)
        if self.graph is None:  # too much changed meanwhile: again, over the rows now
            self._build_aside(self.seq)
            return
        self.graph_origin, self.unsaved = "built", self.size
        if self.rows_origin == "store":
            self.rows_unsaved = self.size

    def _saved_graph(
        self,
        newest: int | None,
        saved: Callable[[], tuple[HnswGraph, int] | None] | None = None,
        moved: set[int] | None = None,
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
        written = live[self.seqs[: self.size] > saved_seq]
        if moved:  # read from where another row now lies, maybe
            written = np.union1d(written, np.fromiter(moved, np.int64, len(moved)))
        redo = np.intersect1d(written, keys, assume_unique=True)
        gone = np.setdiff1d(keys, live, assume_unique=True)  # deleted, archived or invalidated
        add = np.union1d(np.setdiff1d(live, keys, assume_unique=True), redo)  # redo: in live
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
