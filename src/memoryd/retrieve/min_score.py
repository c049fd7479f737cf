"""Stage 4: drop candidates whose normalised score is below ``min_score``."""

from __future__ import annotations

from memoryd.retrieve.candidate import Candidate


def min_score_filter(candidates: list[Candidate], min_score: float) -> list[Candidate]:
    return [c for c in candidates if c.score >= min_score]
