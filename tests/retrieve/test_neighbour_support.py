"""Stage after normalisation, neighbour support: ``+ w · max(neighbour score)``."""

from __future__ import annotations

from dataclasses import replace

import pytest

from memoryd.models import Memory, MemoryType
from memoryd.retrieve.candidate import Candidate
from memoryd.retrieve.config import SEED_RECIPE
from memoryd.retrieve.neighbour_support import neighbour_support

CFG = replace(SEED_RECIPE, neighbour_support=0.5, neighbour_window=2)


def turn(rowid: int, score: float, session: str = "s") -> Candidate:
    memory = Memory(content="x", memory_type=MemoryType.SESSION, session_id=session)
    return Candidate(rowid=rowid, memory=memory, score=score)


def test_a_turn_gains_half_its_best_neighbours_score() -> None:
    question = turn(10, 1.0)
    answer = turn(12, 0.2)  # two rows on: the same speaker's next turn
    far = turn(13, 0.2)  # three rows on: out of the window
    neighbour_support([question, answer, far], CFG)
    # answer: 0.2 + 0.5 × 1.0 = 0.7 ; far: 0.2 + 0.5 × 0.2 (answer, before this stage)
    # = 0.3 ; question: 1.0 + 0.5 × 0.2 = 1.1 (support does not chain)
    assert [c.score for c in (question, answer, far)] == pytest.approx([1.1, 0.7, 0.3])


def test_other_sessions_and_other_memories_are_no_neighbours() -> None:
    strong = turn(10, 1.0, session="a")
    other_session = turn(11, 0.2, session="b")
    fact = Candidate(rowid=12, memory=Memory(content="y", memory_type=MemoryType.INSIGHT))
    fact.score = 0.2
    neighbour_support([strong, other_session, fact], CFG)
    assert [c.score for c in (strong, other_session, fact)] == [1.0, 0.2, 0.2]


def test_seed_recipe_is_a_no_op() -> None:
    a, b = turn(1, 1.0), turn(2, 0.1)
    neighbour_support([a, b], SEED_RECIPE)
    assert [a.score, b.score] == [1.0, 0.1]
