"""Stage 2: weighted Reciprocal Rank Fusion of the two legs.

``score = w_vec / (k + rank_vec) + w_bm25 / (k + rank_bm25)`` with 1-based
ranks; a memory found by one leg only gets that leg's term. Each score is
multiplied by its memory's factor (``config.type_boost``): pinned memories
by ``pinned_boost`` because the user asked for them directly (the other
factors are 1 in the seed recipe).
"""

from __future__ import annotations

from memoryd.retrieve.candidate import Candidate
from memoryd.retrieve.config import SearchConfig, type_boost


def rrf_fuse(candidates: list[Candidate], config: SearchConfig) -> list[Candidate]:
    for c in candidates:
        score = 0.0
        if c.vector_rank is not None:
            score += config.vector_weight / (config.rrf_k + c.vector_rank)
        if c.bm25_rank is not None:
            score += config.bm25_weight / (config.rrf_k + c.bm25_rank)
        if c.memory is not None:
            score *= type_boost(c.memory, config)
        c.score = score
    return candidates
