"""Stage 3, RRF normalise: min-max to [0, 1]; a lone result is min(score × 40, 1); ties → 1."""

from __future__ import annotations

from dataclasses import replace

import pytest

from memoryd.models import Memory, MemoryType
from memoryd.retrieve.candidate import Candidate
from memoryd.retrieve.config import SEED_RECIPE
from memoryd.retrieve.rrf_fusion import rrf_fuse
from memoryd.retrieve.rrf_normalize import rrf_normalize


def scored(*scores: float) -> list[Candidate]:
    return [
        Candidate(rowid=i, memory=Memory(content=f"m{i}"), score=s) for i, s in enumerate(scores)
    ]


def test_seed_scale_default() -> None:
    assert SEED_RECIPE.rrf_scale == 40.0


def test_min_max_highest_one_lowest_zero() -> None:
    # span = 0.02 - 0.01 = 0.01; middle: (0.015 - 0.01)/0.01 = 0.5
    out = rrf_normalize(scored(0.02, 0.01, 0.015), SEED_RECIPE)
    assert [c.score for c in out] == pytest.approx([1.0, 0.0, 0.5])


def test_min_max_uneven_spacing() -> None:
    # span = 0.03 - 0.012 = 0.018; (0.0165 - 0.012)/0.018 = 0.0045/0.018 = 0.25
    out = rrf_normalize(scored(0.012, 0.0165, 0.03), SEED_RECIPE)
    assert [c.score for c in out] == pytest.approx([0.0, 0.25, 1.0])


def test_two_results_become_one_and_zero() -> None:
    out = rrf_normalize(scored(0.004918, 0.016393), SEED_RECIPE)
    assert [c.score for c in out] == [0.0, 1.0]


def test_order_is_kept() -> None:
    out = rrf_normalize(scored(0.01, 0.03, 0.02), SEED_RECIPE)
    assert [c.rowid for c in out] == [0, 1, 2]


def test_single_result_scaled_by_40() -> None:
    # 0.02 × 40 = 0.8
    (c,) = rrf_normalize(scored(0.02), SEED_RECIPE)
    assert c.score == pytest.approx(0.8)


def test_single_result_from_rrf() -> None:
    # (0.7/61 + 0.3/62) × 40 = 0.0163141195 × 40 = 0.6525647805...
    (c,) = rrf_normalize(scored(0.7 / 61 + 0.3 / 62), SEED_RECIPE)
    assert c.score == pytest.approx(0.65256478053940, rel=1e-12)


def test_single_result_capped_at_one() -> None:
    # 0.03 × 40 = 1.2 → min(1.2, 1.0) = 1.0
    (c,) = rrf_normalize(scored(0.03), SEED_RECIPE)
    assert c.score == 1.0


def test_single_result_exactly_at_cap() -> None:
    # 0.025 × 40 = 1.0
    (c,) = rrf_normalize(scored(0.025), SEED_RECIPE)
    assert c.score == pytest.approx(1.0)


def test_single_result_custom_scale() -> None:
    # 0.005 × 100 = 0.5
    (c,) = rrf_normalize(scored(0.005), replace(SEED_RECIPE, rrf_scale=100.0))
    assert c.score == pytest.approx(0.5)


def test_all_equal_become_one() -> None:
    out = rrf_normalize(scored(0.0114, 0.0114, 0.0114), SEED_RECIPE)
    assert [c.score for c in out] == [1.0, 1.0, 1.0]


def test_empty() -> None:
    assert rrf_normalize([], SEED_RECIPE) == []


def test_fused_then_normalised() -> None:
    # A: 0.7/61 + 0.3/61 = 1/61; B: 0.7/62; C: 0.3/62 (lowest)
    # B' = (0.7/62 - 0.3/62) / (1/61 - 0.3/62) = (0.4/62) / (43.7/3782) = 24.4/43.7 = 244/437
    #    = 0.5583524027...
    mems = [Memory(content=x, memory_type=MemoryType.INSIGHT) for x in "abc"]
    cands = [
        Candidate(rowid=1, memory=mems[0], vector_rank=1, bm25_rank=1),
        Candidate(rowid=2, memory=mems[1], vector_rank=2),
        Candidate(rowid=3, memory=mems[2], bm25_rank=2),
    ]
    out = rrf_normalize(rrf_fuse(cands, SEED_RECIPE), SEED_RECIPE)
    assert [c.score for c in out] == pytest.approx([1.0, 0.55835240274600, 0.0], rel=1e-12)
