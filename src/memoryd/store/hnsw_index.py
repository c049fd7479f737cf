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

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    from usearch.index import Index


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

    def add(
        self,
        rowids: npt.NDArray[np.int64],
        vectors: npt.NDArray[np.float32],
        threads: int | None = None,
    ) -> None:
        """Insert rows that are not in the graph (a rowid already in it is an error), on
        ``threads`` threads (default: every core for a large batch)."""
        import numpy as np

        if rowids.size == 0:
            return
        if threads is None:
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
        """Write the graph to ``path`` (``GraphFile`` writes it aside, then renames it)."""
        self._index.save(str(path))

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
