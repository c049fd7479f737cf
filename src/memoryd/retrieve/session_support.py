"""After normalisation: a turn of a session that matches the query as a whole rises.

A conversation's evidence clusters: the session in which something was
discussed holds several turns that match the query, while a stray turn of
another session that happens to share a word stands alone. Each session's
support is the mean of its ``config.session_top`` best turn scores among the
candidates (a session with fewer counts the missing ones as 0), divided by
the best session's; every turn of a session is then weighed by it:

    score ×= (1 − w) + w · support(session),   w = config.session_support

so a turn of the best-supported session keeps its score and a lone turn of
a session nothing else matched loses up to ``w`` of it. Memories that are
not conversation turns, or have no session, keep their score.
"""

from __future__ import annotations

from memoryd.models import MemoryType
from memoryd.retrieve.candidate import Candidate
from memoryd.retrieve.config import SearchConfig


def session_of(candidate: Candidate) -> str | None:
    """The session of a conversation turn; None for any other memory."""
    memory = candidate.mem
    return memory.session_id if memory.memory_type is MemoryType.SESSION else None


def session_support(candidates: list[Candidate], config: SearchConfig) -> list[Candidate]:
    if config.session_support == 0.0 or not candidates:
        return candidates
    scores: dict[str, list[float]] = {}
    for c in candidates:
        session = session_of(c)
        if session:
            scores.setdefault(session, []).append(max(c.score, 0.0))
    top = config.session_top
    support = {s: sum(sorted(v, reverse=True)[:top]) / top for s, v in scores.items()}
    best = max(support.values(), default=0.0)
    if best <= 0.0:
        return candidates
    w = config.session_support
    for c in candidates:
        session = session_of(c)
        if session:
            c.score *= (1.0 - w) + w * support[session] / best
    return candidates
