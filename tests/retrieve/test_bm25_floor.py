"""Stage 7, BM25 floor: with a rerank and bm25_norm ≥ 0.75, keep ≥ 95 % of the pre-rerank score."""

from __future__ import annotations

from dataclasses import replace

import pytest

from memoryd.models import Memory
from memoryd.retrieve.bm25_floor import bm25_floor
from memoryd.retrieve.candidate import Candidate
from memoryd.retrieve.config import SEED_RECIPE, SearchConfig


def cand(score: float, pre: float | None, bm25_norm: float) -> Candidate:
    return Candidate(
        rowid=1,
        memory=Memory(content="ERR_4711"),
        score=score,
        pre_rerank_score=pre,
        bm25_norm=bm25_norm,
    )


def floored(c: Candidate, config: SearchConfig = SEED_RECIPE) -> float:
    (out,) = bm25_floor([c], config)
    return out.score


def test_seed_defaults() -> None:
    assert SEED_RECIPE.bm25_floor_threshold == 0.75
    assert SEED_RECIPE.bm25_floor_keep == 0.95


def test_floor_lifts_sunk_keyword_match() -> None:
    # floor = 0.8 × 0.95 = 0.76 > 0.5 → 0.76
    assert floored(cand(0.5, 0.8, 1.0)) == pytest.approx(0.76)


def test_floor_at_threshold_exactly() -> None:
    # bm25_norm = 0.75 ≥ 0.75 → max(0.5, 0.76) = 0.76
    assert floored(cand(0.5, 0.8, 0.75)) == pytest.approx(0.76)


def test_below_threshold_untouched() -> None:
    assert floored(cand(0.5, 0.8, 0.7499)) == 0.5


def test_without_rerank_untouched() -> None:
    # no pre-rerank score: the reranker did not run, nothing to protect
    assert floored(cand(0.2, None, 1.0)) == 0.2


def test_score_above_floor_kept() -> None:
    # floor = 0.8 × 0.95 = 0.76 < 0.9 → 0.9
    assert floored(cand(0.9, 0.8, 1.0)) == 0.9


def test_floor_never_lowers() -> None:
    # floor = 0.5 × 0.95 = 0.475 < 0.48 → 0.48
    assert floored(cand(0.48, 0.5, 0.9)) == 0.48


def test_custom_threshold_and_keep() -> None:
    cfg = replace(SEED_RECIPE, bm25_floor_threshold=0.5, bm25_floor_keep=0.5)
    # 0.6 ≥ 0.5; floor = 0.8 × 0.5 = 0.4 > 0.1 → 0.4
    assert floored(cand(0.1, 0.8, 0.6), cfg) == pytest.approx(0.4)


def test_after_blend() -> None:
    # rerank 0.1 on an original 0.9: 0.6·0.1 + 0.4·0.9 = 0.06 + 0.36 = 0.42
    # bm25_norm 1.0 → floor 0.9 × 0.95 = 0.855 → 0.855
    blended = 0.6 * 0.1 + 0.4 * 0.9
    assert blended == pytest.approx(0.42)
    assert floored(cand(blended, 0.9, 1.0)) == pytest.approx(0.855)


def test_each_candidate_judged_alone() -> None:
    strong = cand(0.3, 0.6, 0.8)  # floor 0.6 × 0.95 = 0.57
    weak = cand(0.3, 0.6, 0.2)  # untouched
    out = bm25_floor([strong, weak], SEED_RECIPE)
    assert [c.score for c in out] == pytest.approx([0.57, 0.3])
