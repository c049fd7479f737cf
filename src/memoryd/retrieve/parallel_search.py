"""Stage 1: the vector leg and the BM25 leg, run concurrently.

Each leg fetches ``limit × fetch_multiplier`` candidates with no score floor.
A leg that fails is logged and the other answers alone; only when both fail
does the search fail, because an empty answer would look like "no memory".
"""

from __future__ import annotations

import logging
from concurrent.futures import Future, ThreadPoolExecutor

import numpy as np
import numpy.typing as npt

from memoryd.errors import MemorydError, StorageError
from memoryd.retrieve.candidate import Candidate
from memoryd.store.filters import MemoryFilter
from memoryd.store.sqlite import SQLiteStore

log = logging.getLogger(__name__)
_POOL = ThreadPoolExecutor(max_workers=4, thread_name_prefix="memoryd-search")


def parallel_search(
    store: SQLiteStore,
    tenant_id: str,
    space_id: str,
    query: str,
    query_vector: npt.NDArray[np.float32] | None,
    k: int,
    f: MemoryFilter,
) -> list[Candidate]:
    vector_leg: Future[list[tuple[int, float]]] | None = None
    if query_vector is not None:
        vector_leg = _POOL.submit(store.vector_search, tenant_id, space_id, query_vector, k, f)
    bm25_leg = _POOL.submit(store.bm25_search, tenant_id, space_id, query, k, f)

    errors: list[BaseException] = []
    vector_hits: list[tuple[int, float]] = []
    bm25_hits: list[tuple[int, float]] = []
    if vector_leg is not None:
        try:
            vector_hits = vector_leg.result()
        except (MemorydError, ValueError, RuntimeError) as exc:
            log.warning("vector leg failed, answering from BM25: %s", exc)
            errors.append(exc)
    try:
        bm25_hits = bm25_leg.result()
    except MemorydError as exc:
        log.warning("BM25 leg failed, answering from vectors: %s", exc)
        errors.append(exc)
    if errors and (len(errors) == 2 or (query_vector is None)):
        raise StorageError(f"both search legs failed: {'; '.join(map(str, errors))}")

    candidates: dict[int, Candidate] = {}
    for rank, (rowid, sim) in enumerate(vector_hits, start=1):
        candidates[rowid] = Candidate(rowid=rowid, vector_score=sim, vector_rank=rank)
    best = bm25_hits[0][1] if bm25_hits else 0.0
    for rank, (rowid, relevance) in enumerate(bm25_hits, start=1):
        c = candidates.setdefault(rowid, Candidate(rowid=rowid))
        c.bm25_score, c.bm25_rank = relevance, rank
        c.bm25_norm = relevance / best if best > 0 else 0.0
    return list(candidates.values())
