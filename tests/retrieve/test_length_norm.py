"""Stage 10, length normalisation: ``score /= max(1, 1 + log2(len / 500))``."""

from __future__ import annotations

import pytest

from memoryd.models import Memory
from memoryd.retrieve.candidate import Candidate
from memoryd.retrieve.length_norm import length_factor, length_norm


def cand(length: int, score: float = 1.0, char: str = "a") -> Candidate:
    return Candidate(rowid=1, memory=Memory(content=char * length), score=score)


@pytest.mark.parametrize(
    ("length", "divisor"),
    [
        (1, 1.0),  # 1 + log2(0.002) < 1 → max(1, ·) = 1
        (300, 1.0),  # 1 + log2(0.6) = 0.263 → 1
        (499, 1.0),
        (500, 1.0),  # 1 + log2(1) = 1
        (501, 1.00288250853312),  # 1 + log2(1.002) = 1 + 0.0028825 = 1.0028825...
        (750, 1.58496250072116),  # 1 + log2(1.5) = 1 + 0.5849625 = 1.5849625...
        (1000, 2.0),  # 1 + log2(2) = 2
        (2000, 3.0),  # 1 + log2(4) = 3
        (4000, 4.0),  # 1 + log2(8) = 4
        (8000, 5.0),  # 1 + log2(16) = 5
    ],
)
def test_length_factor(length: int, divisor: float) -> None:
    assert length_factor(length) == pytest.approx(divisor, rel=1e-12)


@pytest.mark.parametrize(
    ("length", "expected"),
    [
        (500, 0.9),  # ≤ 500: none
        (1000, 0.45),  # 0.9 / 2
        (2000, 0.3),  # 0.9 / 3
        (4000, 0.225),  # 0.9 / 4
    ],
)
def test_length_norm_divides_score(length: int, expected: float) -> None:
    (c,) = length_norm([cand(length, score=0.9)])
    assert c.score == pytest.approx(expected, rel=1e-12)


def test_empty_content_no_penalty() -> None:
    (c,) = length_norm([cand(0, score=0.7)])
    assert c.score == pytest.approx(0.7)


def test_length_counts_characters() -> None:
    # The seed's table is in characters: 1,000 CJK characters (3,000 UTF-8 bytes) → ÷2,
    # not 1 + log2(3000/500) = 3.585 as a byte count would give.
    (c,) = length_norm([cand(1000, score=0.8, char="记")])
    assert c.score == pytest.approx(0.4)
