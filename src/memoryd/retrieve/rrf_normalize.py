"""Stage 3: map raw RRF scores (~0.01–0.03) onto [0, 1].

Min-max over the candidates; a lone result is scaled by ``rrf_scale`` (capped
at 1) since min-max is undefined for one value; if all scores are equal they
all become 1.0 (none is worse than another).
"""

from __future__ import annotations

from memoryd.retrieve.candidate import Candidate
from memoryd.retrieve.config import SearchConfig


def rrf_normalize(candidates: list[Candidate], config: SearchConfig) -> list[Candidate]:
    if not candidates:
        return candidates
    if len(candidates) == 1:
        candidates[0].score = min(candidates[0].score * config.rrf_scale, 1.0)
        return candidates
    low = min(c.score for c in candidates)
    high = max(c.score for c in candidates)
    span = high - low
    for c in candidates:
        c.score = 1.0 if span == 0 else (c.score - low) / span
    return candidates
