"""Stage 12: diversity. A near-copy of a better result is halved, then the list is cut.

Word-level Jaccard similarity against every higher-ranked result; above
``mmr_jaccard`` the candidate's score is multiplied by ``mmr_penalty``.
"""

from __future__ import annotations

import re

from memoryd.retrieve.candidate import Candidate, by_score
from memoryd.retrieve.config import SearchConfig

_WORD = re.compile(r"\w+")


def word_set(text: str) -> frozenset[str]:
    return frozenset(_WORD.findall(text.lower()))


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def mmr_diversity(candidates: list[Candidate], limit: int, config: SearchConfig) -> list[Candidate]:
    ranked = by_score(candidates)
    words = [word_set(c.mem.content) for c in ranked]
    for i, c in enumerate(ranked):
        if any(jaccard(words[i], words[j]) > config.mmr_jaccard for j in range(i)):
            c.score *= config.mmr_penalty
    return by_score(ranked)[:limit]
