"""Stage 7: a strong keyword match keeps at least 95 % of its pre-rerank score.

A cross-encoder can under-rate an exact identifier or name; when the BM25 leg
was confident (normalised relevance >= 0.75) the reranker may not sink it.
Without a rerank there is no pre-rerank score and the stage changes nothing.
"""

from __future__ import annotations

from memoryd.retrieve.candidate import Candidate
from memoryd.retrieve.config import SearchConfig


def bm25_floor(candidates: list[Candidate], config: SearchConfig) -> list[Candidate]:
    for c in candidates:
        if c.pre_rerank_score is not None and c.bm25_norm >= config.bm25_floor_threshold:
            c.score = max(c.score, c.pre_rerank_score * config.bm25_floor_keep)
    return candidates
