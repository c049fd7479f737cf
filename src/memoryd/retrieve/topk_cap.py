"""Stage 5: keep the best ``limit × topk_multiplier``: enough for a reranker, no more."""

from __future__ import annotations

from memoryd.retrieve.candidate import Candidate, by_score


def topk_cap(candidates: list[Candidate], limit: int, multiplier: int) -> list[Candidate]:
    return by_score(candidates)[: limit * multiplier]
