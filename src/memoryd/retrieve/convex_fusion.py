"""Stage 2 (default recipe): a convex combination of the legs' normalised scores.

``score = w_vec · v + w_bm25 · b`` where ``v`` and ``b`` are each leg's score
min-max normalised over the candidates that leg returned (its best is 1, its
worst 0, a leg with a single or all-equal score gives 1); a memory a leg did
not return gets 0 from it. When the candidates are all there is
(``exhaustive``: the vector leg returned fewer than it asked for, and the
recipe's ``anchor_small_sets``), each leg is scaled from 0 instead
(``max(0, v) / best``): the weakest of three memories is not unrelated for
being the weakest. Each score is then multiplied by its memory's factor
(``config.type_boost``), as with RRF.
"""

from __future__ import annotations

from collections.abc import Callable

from memoryd.retrieve.candidate import Candidate
from memoryd.retrieve.config import SearchConfig, type_boost


def _normaliser(values: list[float], from_zero: bool = False) -> Callable[[float], float]:
    if not values:
        return lambda v: 0.0
    low, high = (0.0 if from_zero else min(values)), max(values)
    if high <= low:
        return lambda v: 1.0
    return lambda v: max(0.0, v - low) / (high - low)


def convex_fuse(
    candidates: list[Candidate], config: SearchConfig, exhaustive: bool = False
) -> list[Candidate]:
    from_zero = exhaustive and config.anchor_small_sets
    vector = _normaliser(
        [c.vector_score for c in candidates if c.vector_score is not None], from_zero
    )
    bm25 = _normaliser([c.bm25_score for c in candidates if c.bm25_score is not None], from_zero)
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
