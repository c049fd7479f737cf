"""Stage 10: long content is divided down so verbose memories do not crowd out facts.

``score /= max(1, 1 + log2(len / 500))``: no penalty up to 500 characters,
÷2 at 1,000, ÷3 at 2,000, ÷4 at 4,000.
"""

from __future__ import annotations

import math

from memoryd.retrieve.candidate import Candidate

LENGTH_ANCHOR = 500.0


def length_factor(length: int) -> float:
    if length <= 0:
        return 1.0
    return max(1.0, 1.0 + math.log2(length / LENGTH_ANCHOR))


def length_norm(candidates: list[Candidate]) -> list[Candidate]:
    for c in candidates:
        c.score /= length_factor(len(c.mem.content))
    return candidates
