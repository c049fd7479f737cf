"""Stage 2 (default recipe): a convex combination of the legs' normalised scores.

``score = w_vec · v + w_bm25 · b`` where ``v`` and ``b`` are each leg's score
min-max normalised over the candidates that leg returned (its best is 1, its
worst 0, a leg with a single or all-equal score gives 1); a memory a leg did
not return gets 0 from it. Pinned memories and superseding ones are
multiplied by their boost (``config.type_boost``), as with RRF.
"""

from __future__ import annotations

from collections.abc import Callable

from memoryd.retrieve.candidate import Candidate
from memoryd.retrieve.config import SearchConfig, type_boost


def _normaliser(values: list[float]) -> Callable[[float], float]:
    if not values:
        return lambda v: 0.0
    low, high = min(values), max(values)
    if high == low:
        return lambda v: 1.0
    return lambda v: (v - low) / (high - low)


def convex_fuse(candidates: list[Candidate], config: SearchConfig) -> list[Candidate]:
    vector = _normaliser([c.vector_score for c in candidates if c.vector_score is not None])
    bm25 = _normaliser([c.bm25_score for c in candidates if c.bm25_score is not None])
    for c in candidates:
        score = 0.0
        if c.vector_score is not None:
            score += config.vector_weight * vector(c.vector_score)
        if c.bm25_score is not None:
            score += config.bm25_weight * bm25(c.bm25_score)
        if c.memory is not None:
            score *= type_boost(c.memory, config)
        c.score = score
    return candidates
