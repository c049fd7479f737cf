"""After normalisation: a turn next to a strong match rises with it.

The words of a question are often in one turn and its answer in the next
ones: "what did Sam build for the school fair?" matches "it was for the
school fair …", two turns after "I built a small wooden puppet theatre …",
the turn that answers. A turn gains a share of its best neighbour's score:

    score += config.neighbour_support · max(score of a neighbour)

where a neighbour is another candidate turn of the same session stored at
most ``config.neighbour_window`` rows before or after it (a conversation's
turns are stored in order, one row each, so rows are its positions; in a
two-person chat a window of 2 reaches the same speaker's previous and next
turn). The scores used are those before this stage, so support does not
chain along a session. Only candidates take part: the stage reorders what
the legs found and adds nothing, which keeps it free of store reads.
"""

from __future__ import annotations

from memoryd.retrieve.candidate import Candidate
from memoryd.retrieve.config import SearchConfig
from memoryd.retrieve.session_support import session_of


def neighbour_support(candidates: list[Candidate], config: SearchConfig) -> list[Candidate]:
    if config.neighbour_support == 0.0 or not candidates:
        return candidates
    turns = {c.rowid: (session_of(c), c.score) for c in candidates}
    window = config.neighbour_window
    gains: dict[int, float] = {}
    for c in candidates:
        session = turns[c.rowid][0]
        if not session:
            continue
        best = 0.0
        for offset in range(1, window + 1):
            for rowid in (c.rowid - offset, c.rowid + offset):
                other = turns.get(rowid)
                if other is not None and other[0] == session:
                    best = max(best, other[1])
        gains[c.rowid] = config.neighbour_support * best
    for c in candidates:
        c.score += gains.get(c.rowid, 0.0)
    return candidates
