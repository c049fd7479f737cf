"""Stage 9, importance weight: ``score × (0.7 + 0.3 × importance)``."""

from __future__ import annotations

import pytest

from memoryd.models import Memory
from memoryd.retrieve.candidate import Candidate
from memoryd.retrieve.importance import importance_weight


def cand(score: float, importance: float) -> Candidate:
    return Candidate(rowid=1, memory=Memory(content="x", importance=importance), score=score)


@pytest.mark.parametrize(
    ("score", "importance", "expected"),
    [
        (1.0, 0.0, 0.7),  # 1 × (0.7 + 0.3·0) = 0.7
        (1.0, 1.0, 1.0),  # 1 × (0.7 + 0.3·1) = 1.0, unchanged
        (0.8, 1.0, 0.8),  # unchanged
        (1.0, 0.5, 0.85),  # 0.7 + 0.15 = 0.85
        (0.6, 0.25, 0.465),  # 0.6 × (0.7 + 0.075) = 0.6 × 0.775 = 0.465
        (0.5, 0.0, 0.35),  # 0.5 × 0.7 = 0.35
        (0.0, 0.9, 0.0),
    ],
)
def test_importance_multiplier(score: float, importance: float, expected: float) -> None:
    (c,) = importance_weight([cand(score, importance)])
    assert c.score == pytest.approx(expected, rel=1e-12, abs=1e-15)


def test_applies_to_each_candidate_in_place() -> None:
    cands = [cand(0.9, 0.0), cand(0.9, 1.0)]
    out = importance_weight(cands)
    assert out is cands
    # 0.9 × 0.7 = 0.63 ; 0.9 × 1.0 = 0.9
    assert [c.score for c in out] == pytest.approx([0.63, 0.9])
