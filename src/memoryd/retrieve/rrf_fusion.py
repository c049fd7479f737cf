"""Stage 2: weighted Reciprocal Rank Fusion of the two legs.

``score = w_vec / (k + rank_vec) + w_bm25 / (k + rank_bm25)`` with 1-based
ranks; a memory found by one leg only gets that leg's term. Pinned memories
are multiplied by ``pinned_boost`` because the user asked for them directly.
"""

from __future__ import annotations

from memoryd.models import MemoryType
from memoryd.retrieve.candidate import Candidate
from memoryd.retrieve.config import SearchConfig


def rrf_fuse(candidates: list[Candidate], config: SearchConfig) -> list[Candidate]:
    for c in candidates:
        score = 0.0
        if c.vector_rank is not None:
            score += config.vector_weight / (config.rrf_k + c.vector_rank)
        if c.bm25_rank is not None:
            score += config.bm25_weight / (config.rrf_k + c.bm25_rank)
        if c.memory is not None and c.memory.memory_type is MemoryType.PINNED:
            score *= config.pinned_boost
        c.score = score
    return candidates
