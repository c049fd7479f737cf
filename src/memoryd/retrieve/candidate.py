"""The unit that flows through the retrieval stages."""

from __future__ import annotations

from dataclasses import dataclass

from memoryd.models import Memory


@dataclass
class Candidate:
    rowid: int
    memory: Memory | None = None
    vector_score: float | None = None  # cosine similarity
    vector_rank: int | None = None  # 1-based
    bm25_score: float | None = None  # raw BM25 relevance (higher is better)
    bm25_norm: float = 0.0  # BM25 relevance / the leg's best, in [0, 1]
    bm25_rank: int | None = None  # 1-based
    score: float = 0.0
    pre_rerank_score: float | None = None

    @property
    def mem(self) -> Memory:
        assert self.memory is not None, "memories are loaded after stage 1"
        return self.memory


def by_score(candidates: list[Candidate]) -> list[Candidate]:
    """Best first; ties keep their order (Python's sort is stable)."""
    return sorted(candidates, key=lambda c: -c.score)
