"""Stage 11: the last safety net, dropping anything scored below ``hard_cutoff``."""

from __future__ import annotations

from memoryd.retrieve.candidate import Candidate


def hard_cutoff(candidates: list[Candidate], cutoff: float) -> list[Candidate]:
    return [c for c in candidates if c.score >= cutoff]
