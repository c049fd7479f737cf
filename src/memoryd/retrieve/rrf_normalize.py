"""Stage 3: map raw RRF scores (~0.01–0.03) onto [0, 1].

Min-max over the candidates; a lone result is scaled by ``rrf_scale`` (capped
at 1) since min-max is undefined for one value; if all scores are equal they
all become 1.0 (none is worse than another). When the candidates are all
there is and the recipe anchors small sets, scores are divided by the best
instead, so the weakest keeps its share of the best rather than 0.
"""

from __future__ import annotations

from memoryd.retrieve.candidate import Candidate
from memoryd.retrieve.config import SearchConfig


def rrf_normalize(
    candidates: list[Candidate], config: SearchConfig, exhaustive: bool = False
) -> list[Candidate]:
    if not candidates:
        return candidates
    if len(candidates) == 1:
        candidates[0].score = min(candidates[0].score * config.rrf_scale, 1.0)
        return candidates
    if exhaustive and config.anchor_small_sets:
        best = max(c.score for c in candidates)
        for c in candidates:
            c.score = c.score / best if best > 0 else 0.0
        return candidates
    low = min(c.score for c in candidates)
    high = max(c.score for c in candidates)
    span = high - low
    for c in candidates:
        c.score = 1.0 if span == 0 else (c.score - low) / span
    return candidates
