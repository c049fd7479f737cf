"""Stages 4, 5 and 11: min score filter (0.3), top-k cap (limit × 2), hard cutoff (0.005)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from memoryd.models import Memory
from memoryd.retrieve.candidate import Candidate
from memoryd.retrieve.config import SEED_RECIPE, SearchConfig
from memoryd.retrieve.hard_cutoff import hard_cutoff
from memoryd.retrieve.min_score import min_score_filter
from memoryd.retrieve.topk_cap import topk_cap


def scored(*scores: float) -> list[Candidate]:
    return [
        Candidate(rowid=i, memory=Memory(content=f"m{i}"), score=s) for i, s in enumerate(scores)
    ]


def test_seed_defaults() -> None:
    cfg = SearchConfig()
    assert cfg.min_score == 0.3
    assert cfg.topk_multiplier == 2
    assert cfg.hard_cutoff == 0.005


# --- stage 4: min score -------------------------------------------------------------


def test_min_score_drops_below_threshold() -> None:
    # 0.29999 < 0.3 dropped; 0.3 is not below 0.3, kept; 0.0 dropped
    out = min_score_filter(scored(0.29999, 0.3, 0.5, 0.0, 1.0), SEED_RECIPE.min_score)
    assert [c.score for c in out] == [0.3, 0.5, 1.0]


def test_min_score_keeps_order() -> None:
    out = min_score_filter(scored(0.4, 0.9, 0.1, 0.6), 0.3)
    assert [c.rowid for c in out] == [0, 1, 3]


def test_min_score_custom_threshold() -> None:
    cfg = replace(SEED_RECIPE, min_score=0.0)
    assert len(min_score_filter(scored(0.0, 0.1, 0.2), cfg.min_score)) == 3
    assert min_score_filter(scored(0.5, 0.6), 0.7) == []


def test_min_score_empty() -> None:
    assert min_score_filter([], 0.3) == []


# --- stage 5: top-k cap -------------------------------------------------------------


def test_topk_keeps_limit_times_two_sorted() -> None:
    # limit 2 × 2 = 4 of 6, best first
    out = topk_cap(scored(0.1, 0.9, 0.5, 0.7, 0.3, 0.8), 2, SEED_RECIPE.topk_multiplier)
    assert [c.score for c in out] == [0.9, 0.8, 0.7, 0.5]
    assert [c.rowid for c in out] == [1, 5, 3, 2]


def test_topk_fewer_than_cap_all_kept_sorted() -> None:
    # limit 5 × 2 = 10 > 3 candidates
    out = topk_cap(scored(0.2, 0.6, 0.4), 5, 2)
    assert [c.score for c in out] == [0.6, 0.4, 0.2]


def test_topk_ties_keep_input_order() -> None:
    out = topk_cap(scored(0.5, 0.9, 0.5, 0.5), 1, 2)  # keeps 1 × 2 = 2
    assert [c.rowid for c in out] == [1, 0]


def test_topk_custom_multiplier() -> None:
    cfg = replace(SEED_RECIPE, topk_multiplier=3)
    # limit 1 × 3 = 3
    out = topk_cap(scored(0.1, 0.2, 0.3, 0.4, 0.5), 1, cfg.topk_multiplier)
    assert [c.score for c in out] == [0.5, 0.4, 0.3]


def test_topk_empty() -> None:
    assert topk_cap([], 10, 2) == []


# --- stage 11: hard cutoff ----------------------------------------------------------


def test_hard_cutoff_drops_below_0_005() -> None:
    # 0.0049 < 0.005 dropped; 0.005 itself kept; 0.0 dropped
    out = hard_cutoff(scored(0.0049, 0.005, 0.006, 0.0, 0.9), SEED_RECIPE.hard_cutoff)
    assert [c.score for c in out] == [0.005, 0.006, 0.9]


def test_hard_cutoff_does_not_sort() -> None:
    out = hard_cutoff(scored(0.2, 0.8, 0.001, 0.5), 0.005)
    assert [c.rowid for c in out] == [0, 1, 3]


def test_hard_cutoff_custom() -> None:
    cfg = replace(SEED_RECIPE, hard_cutoff=0.1)
    out = hard_cutoff(scored(0.09, 0.1, 0.11), cfg.hard_cutoff)
    assert [c.score for c in out] == pytest.approx([0.1, 0.11])


def test_hard_cutoff_after_heavy_penalties() -> None:
    # 0.02 × 0.79 (working floor boost) × 0.7 (importance 0) / 4 (4000 chars)
    # = 0.02 × 0.79 = 0.0158; × 0.7 = 0.01106; / 4 = 0.002765 < 0.005 → dropped
    low = 0.02 * 0.79 * 0.7 / 4
    # 0.05 × 0.79 × 0.7 / 4 = 0.0069125 ≥ 0.005 → kept
    high = 0.05 * 0.79 * 0.7 / 4
    assert low == pytest.approx(0.002765)
    assert high == pytest.approx(0.0069125)
    out = hard_cutoff(scored(low, high), SEED_RECIPE.hard_cutoff)
    assert [c.rowid for c in out] == [1]
