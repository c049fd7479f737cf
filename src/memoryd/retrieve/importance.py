"""Stage 9: a mild importance multiplier, ``score × (0.7 + 0.3 × importance)``."""

from __future__ import annotations

from memoryd.retrieve.candidate import Candidate

IMPORTANCE_BASE = 0.7
IMPORTANCE_SPAN = 0.3


def importance_weight(candidates: list[Candidate]) -> list[Candidate]:
    for c in candidates:
        c.score *= IMPORTANCE_BASE + IMPORTANCE_SPAN * c.mem.importance
    return candidates
