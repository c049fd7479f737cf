"""Stage after normalisation, session support: ``× (1 − w) + w · support / best``."""

from __future__ import annotations

from dataclasses import replace

import pytest

from memoryd.models import Memory, MemoryType
from memoryd.retrieve.candidate import Candidate
from memoryd.retrieve.config import SEED_RECIPE
from memoryd.retrieve.session_support import session_support

CFG = replace(SEED_RECIPE, session_support=0.5, session_top=2)


def turn(session: str | None, score: float, rowid: int) -> Candidate:
    memory = Memory(content="x", memory_type=MemoryType.SESSION, session_id=session)
    return Candidate(rowid=rowid, memory=memory, score=score)


def test_turns_are_weighed_by_their_sessions_support() -> None:
    a1, a2, a3 = turn("a", 1.0, 1), turn("a", 0.6, 2), turn("a", 0.2, 3)
    b1 = turn("b", 0.8, 4)  # a lone match: support (0.8 + 0) / 2 = 0.4
    session_support([a1, a2, a3, b1], CFG)
    # support a = (1.0 + 0.6) / 2 = 0.8 (the best); b = 0.4, half of a's
    # a's turns × (0.5 + 0.5 · 1) = × 1 ; b's × (0.5 + 0.5 · 0.5) = × 0.75
    assert [c.score for c in (a1, a2, a3)] == pytest.approx([1.0, 0.6, 0.2])
    assert b1.score == pytest.approx(0.6)


def test_other_memories_keep_their_score() -> None:
    fact = Candidate(rowid=9, memory=Memory(content="y", memory_type=MemoryType.INSIGHT), score=0.3)
    no_session = turn(None, 0.3, 8)
    strong = turn("a", 1.0, 1)
    session_support([fact, no_session, strong, turn("b", 0.1, 2)], CFG)
    assert fact.score == 0.3 and no_session.score == 0.3 and strong.score == 1.0


def test_seed_recipe_is_a_no_op() -> None:
    lone = turn("b", 0.8, 4)
    session_support([turn("a", 1.0, 1), turn("a", 1.0, 2), lone], SEED_RECIPE)
    assert lone.score == 0.8
