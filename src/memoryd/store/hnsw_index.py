"""An approximate nearest-neighbour graph (HNSW) for the spaces too big to scan.

The exact index in :mod:`memoryd.store.vector_index` stays the source of truth:
it owns the rows, their vectors and their validity. This graph only proposes
candidates: it is searched for a few times more rows than asked for, and the
caller drops the ones that are no longer there or not live, then scores the
rest exactly from its own matrix. The graph is built with `usearch`_ over inner
product on unit vectors (the same number as cosine) and stored as float16,
which halves its memory; the exact re-scoring makes that rounding invisible
in the scores.

.. _usearch: https://github.com/unum-cloud/USearch
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    from usearch.index import Index

log = logging.getLogger(__name__)

# A space switches from the exact scan to this graph past this many vectors. The scan
# of 100k 384-dimensional rows takes 10-15 ms on 2 cores, most of a search's budget;
# the graph answers in about 1 ms (python -m bench speed, docs/benchmarks.md).
DEFAULT_HNSW_THRESHOLD = 50_000

# Graph parameters. Measured with the bundled 384-dimensional model on 100k
# synthetic memories (the speed bench's), 40 candidates re-scored exactly: top-10
# recall 1.0 against the exact scan with float16 vectors in the graph (and with
# int8, which builds in 12 s against 34 s and searches in 0.7 ms against 1.1 ms,
# but on random unit vectors, the worst case, gives a filtered search that is not
# the exact answer about one build in three: tests/store/test_hnsw_index.py); about
# 1.0 KiB a vector on disk beside the 1.5 KiB float32 row of the exact index.
# Random unit vectors, which have no structure, are the worst case: 0.99 at 5k
# vectors but far less at 50k.
CONNECTIVITY = 32  # "M": links per node and layer
EXPANSION_ADD = 128  # "efConstruction": breadth of the search that places a new node
EXPANSION_SEARCH = 256  # "ef": breadth of a query (usearch widens it to the count asked for)

# the layout of a saved graph and its description (GraphFile): float16 vectors (a graph of
# another format is rebuilt)
GRAPH_FORMAT = 1

# batches smaller than this are added on the calling thread
_PARALLEL_ADD = 256


class HnswGraph:
    """HNSW over unit vectors, keyed by SQLite rowid. Not thread-safe: callers lock."""

    def __init__(self, dim: int) -> None:
        # imported here: only large spaces pay for the native library (~0.1 s to load)
        from usearch.compiled import MetricKind, ScalarKind
        from usearch.index import Index

        self.dim = dim
        self._index: Index = Index(
            ndim=dim,
            metric=MetricKind.IP,
            dtype=ScalarKind.F16,
            connectivity=CONNECTIVITY,
            expansion_add=EXPANSION_ADD,
            expansion_search=EXPANSION_SEARCH,
        )

    def __len__(self) -> int:
        return len(self._index)

    def add(self, rowids: npt.NDArray[np.int64], vectors: npt.NDArray[np.float32]) -> None:
        """Insert rows that are not in the graph (a rowid already in it is an error)."""
        import numpy as np

        if rowids.size == 0:
            return
        threads = 0 if rowids.size >= _PARALLEL_ADD else 1  # 0: every core
        self._index.add(
            rowids.astype(np.uint64),
            np.ascontiguousarray(vectors, dtype=np.float32),
            threads=threads,
        )

    def remove(self, rowids: npt.NDArray[np.int64]) -> None:
        """Drop rows from the graph; rowids that are not in it are ignored."""
        import numpy as np

        if rowids.size:
            self._index.remove(rowids.astype(np.uint64), threads=1)

    def keys(self) -> npt.NDArray[np.int64]:
        """Every rowid in the graph (unordered)."""
        import numpy as np

        return np.asarray(self._index.keys, dtype=np.int64)

    def save(self, path: Path) -> None:
        """Write the graph to ``path`` (a temporary file, then renamed: never half a file)."""
        partial = path.with_name(path.name + ".partial")
        self._index.save(str(partial))
        os.replace(partial, path)

    @classmethod
    def load(cls, path: Path, dim: int) -> HnswGraph:
        """The graph saved at ``path``; ``ValueError`` when it is unreadable or another shape."""
        from usearch.index import Index

        try:
            index = Index.restore(str(path))
        except (RuntimeError, ValueError, OSError) as exc:
            raise ValueError(f"unreadable graph file {path}: {exc}") from None
        if index is None or index.ndim != dim:
            raise ValueError(f"{path} is not a graph of {dim}-dimensional vectors")
        index.expansion_add = EXPANSION_ADD  # type: ignore[misc]  # has a setter at run time
        index.expansion_search = EXPANSION_SEARCH  # type: ignore[misc]
        graph = cls.__new__(cls)
        graph.dim = dim
        graph._index = index
        return graph

    def search(self, query: npt.NDArray[np.float32], count: int) -> npt.NDArray[np.int64]:
        """The rowids of about the ``count`` nearest rows, best first (approximate)."""
        import numpy as np

        if count <= 0 or len(self._index) == 0:
            return np.zeros(0, np.int64)
        matches = self._index.search(np.asarray(query, dtype=np.float32), count, threads=1)
        return np.asarray(matches.keys, dtype=np.int64)  # one query: a flat array


@dataclass(frozen=True)
class GraphFile:
    """Where one space's graph is kept between processes, and what it must match to be used.

    The description beside the graph records the model, the dimension, the
    graph's size and the store's change counter (``seq``) it holds every
    write up to, and the graph file's size and modification time. A graph
    whose description is missing or does not match (a crash while saving, a
    file edited or truncated, another model) is not loaded: the caller
    builds a new one. Even a wrong graph could not give wrong results (the
    exact index scores and filters every candidate), only worse recall.
    """

    path: Path
    model: str
    dim: int

    @property
    def meta_path(self) -> Path:
        return self.path.with_name(self.path.name + ".json")

    def load(self) -> tuple[HnswGraph, int] | None:
        """The saved graph and its ``seq``; None (and why, in the log) when it cannot be used."""
        try:
            meta = json.loads(self.meta_path.read_text(encoding="utf-8"))
            stat = self.path.stat()
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            log.warning("graph %s: unreadable description (%s); rebuilding", self.path, exc)
            return None
        expected = {
            "version": GRAPH_FORMAT,
            "model": self.model,
            "dim": self.dim,
            "bytes": stat.st_size,
            "mtime_ns": stat.st_mtime_ns,
        }
        if not isinstance(meta, dict) or any(meta.get(k) != v for k, v in expected.items()):
            log.warning("graph %s does not match its description; rebuilding", self.path)
            return None
        try:
            graph = HnswGraph.load(self.path, self.dim)
        except ValueError as exc:
            log.warning("graph %s: %s; rebuilding", self.path, exc)
            return None
        if len(graph) != meta.get("count") or not isinstance(meta.get("seq"), int):
            log.warning("graph %s holds %d rows, not %s; rebuilding", self.path, len(graph), meta)
            return None
        return graph, int(meta["seq"])

    def save(self, graph: HnswGraph, seq: int) -> None:
        """Write the graph, then its description (a crash between leaves it unused)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.meta_path.unlink(missing_ok=True)
        graph.save(self.path)
        stat = self.path.stat()
        meta = {
            "version": GRAPH_FORMAT,
            "model": self.model,
            "dim": self.dim,
            "seq": seq,
            "count": len(graph),
            "bytes": stat.st_size,
            "mtime_ns": stat.st_mtime_ns,
        }
        partial = self.meta_path.with_name(self.meta_path.name + ".partial")
        partial.write_text(json.dumps(meta), encoding="utf-8")
        os.replace(partial, self.meta_path)

    def discard(self) -> None:
        self.meta_path.unlink(missing_ok=True)
        self.path.unlink(missing_ok=True)
