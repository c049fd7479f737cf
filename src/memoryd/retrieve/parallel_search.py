"""Stage 1: the vector leg and the BM25 leg, run concurrently.

Each leg fetches ``limit × fetch_multiplier`` candidates with no score floor.
A leg that fails is logged and the other answers alone; only when both fail
does the search fail, because an empty answer would look like "no memory".
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

import numpy as np
import numpy.typing as npt

from memoryd.errors import MemorydError, StorageError
from memoryd.retrieve.candidate import Candidate
from memoryd.store.filters import MemoryFilter
from memoryd.store.protocol import Store

log = logging.getLogger(__name__)
_POOL = ThreadPoolExecutor(max_workers=4, thread_name_prefix="memoryd-search")


QueryVector = npt.NDArray[np.float32] | None


def submit_embedding(embed: Callable[[str], QueryVector], query: str) -> Future[QueryVector]:
    """Start embedding the query, so the keyword leg need not wait for the model."""
    return _POOL.submit(embed, query)


def _vector_leg(
    store: Store,
    tenant_id: str,
    space_id: str,
    query_vector: Future[QueryVector],
    k: int,
    f: MemoryFilter,
) -> list[tuple[int, float]] | None:
    vector = query_vector.result()
    return None if vector is None else store.vector_search(tenant_id, space_id, vector, k, f)


def parallel_search(
    store: Store,
    tenant_id: str,
    space_id: str,
    query: str,
    query_vector: Future[QueryVector],
    k: int,
    f: MemoryFilter,
) -> list[Candidate]:
    """Both legs for one space; ``query_vector`` resolves to None when embedding failed.

    The keyword leg runs on the pool while this thread waits for the query's vector and
    runs the vector leg itself: a pool thread never waits on another pool task, so
    concurrent searches do not queue behind legs that only wait."""
    bm25_leg = _POOL.submit(store.bm25_search, tenant_id, space_id, query, k, f)

    failures: list[str] = []
    vector_hits: list[tuple[int, float]] = []
    bm25_hits: list[tuple[int, float]] = []
    try:
        found = _vector_leg(store, tenant_id, space_id, query_vector, k, f)
        if found is None:
            failures.append("the query could not be embedded")
        else:
            vector_hits = found
    except (MemorydError, ValueError, RuntimeError) as exc:
        log.warning("vector leg failed, answering from BM25: %s", exc)
        failures.append(str(exc))
    try:
        bm25_hits = bm25_leg.result()
    except MemorydError as exc:
        log.warning("BM25 leg failed, answering from vectors: %s", exc)
        failures.append(str(exc))
    if len(failures) == 2:
        damage = store.storage_damage()  # a damaged file says so (503), not "failed" (500)
        if damage is not None:
            raise damage
        raise StorageError(f"both search legs failed: {'; '.join(failures)}")

    candidates: dict[int, Candidate] = {}
    for rank, (rowid, sim) in enumerate(vector_hits, start=1):
        candidates[rowid] = Candidate(rowid=rowid, vector_score=sim, vector_rank=rank)
    best = bm25_hits[0][1] if bm25_hits else 0.0
    for rank, (rowid, relevance) in enumerate(bm25_hits, start=1):
        c = candidates.setdefault(rowid, Candidate(rowid=rowid))
        c.bm25_score, c.bm25_rank = relevance, rank
        c.bm25_norm = relevance / best if best > 0 else 0.0
    return list(candidates.values())
