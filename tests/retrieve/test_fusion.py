"""Stage 2, RRF fusion: ``w_vec/(k + rank_vec) + w_bm25/(k + rank_bm25)``, pinned × 1.5.

Every expectation is worked out by hand from the seed's formula (K=60,
vector weight 0.7, BM25 weight 0.3, 1-based ranks).
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from memoryd.models import Memory, MemoryType, Relation, RelationType
from memoryd.retrieve.candidate import Candidate
from memoryd.retrieve.config import DEFAULT_RECIPE, SEED_RECIPE, SearchConfig, type_boost
from memoryd.retrieve.convex_fusion import convex_fuse
from memoryd.retrieve.min_score import min_score_filter
from memoryd.retrieve.rrf_fusion import rrf_fuse
from memoryd.retrieve.rrf_normalize import rrf_normalize

REL = 1e-12


def cand(
    vector_rank: int | None = None,
    bm25_rank: int | None = None,
    memory_type: MemoryType = MemoryType.INSIGHT,
    rowid: int = 1,
) -> Candidate:
    return Candidate(
        rowid=rowid,
        memory=Memory(content=f"memory {rowid}", memory_type=memory_type),
        vector_rank=vector_rank,
        bm25_rank=bm25_rank,
    )


def fuse_one(c: Candidate, config: SearchConfig = SEED_RECIPE) -> float:
    (out,) = rrf_fuse([c], config)
    return out.score


def test_both_legs_are_summed() -> None:
    # 0.7/(60+1) + 0.3/(60+2) = 0.0114754098... + 0.0048387096... = 0.0163141195...
    assert fuse_one(cand(vector_rank=1, bm25_rank=2)) == pytest.approx(0.01631411951348, rel=REL)


def test_both_legs_deeper_ranks() -> None:
    # 0.7/(60+3) + 0.3/(60+5) = 0.0111111111... + 0.0046153846... = 0.0157264957...
    assert fuse_one(cand(vector_rank=3, bm25_rank=5)) == pytest.approx(0.01572649572650, rel=REL)


def test_vector_leg_only() -> None:
    # 0.7/(60+1) = 0.0114754098...
    assert fuse_one(cand(vector_rank=1)) == pytest.approx(0.01147540983607, rel=REL)


def test_bm25_leg_only() -> None:
    # 0.3/(60+1) = 0.0049180327...
    assert fuse_one(cand(bm25_rank=1)) == pytest.approx(0.00491803278689, rel=REL)


def test_ranks_are_one_based() -> None:
    # rank 1 divides by 61, not by 60: 0.7/61 = 0.011475..., whereas 0.7/60 = 0.011666...
    score = fuse_one(cand(vector_rank=1))
    assert score == pytest.approx(0.01147540983607, rel=REL)
    assert score != pytest.approx(0.7 / 60, rel=1e-6)


def test_no_leg_scores_zero() -> None:
    assert fuse_one(cand()) == 0.0


def test_pinned_boost_one_leg() -> None:
    # 1.5 × 0.7/61 = 1.05/61 = 0.0172131147...
    c = cand(vector_rank=1, memory_type=MemoryType.PINNED)
    assert fuse_one(c) == pytest.approx(0.01721311475410, rel=REL)


def test_pinned_boost_both_legs() -> None:
    # 1.5 × (0.7/61 + 0.3/61) = 1.5/61 = 0.0245901639...
    c = cand(vector_rank=1, bm25_rank=1, memory_type=MemoryType.PINNED)
    assert fuse_one(c) == pytest.approx(0.02459016393443, rel=REL)


@pytest.mark.parametrize("memory_type", [MemoryType.INSIGHT, MemoryType.SESSION])
def test_unpinned_types_get_no_boost(memory_type: MemoryType) -> None:
    # 0.7/61 + 0.3/61 = 1/61 = 0.0163934426...
    c = cand(vector_rank=1, bm25_rank=1, memory_type=memory_type)
    assert fuse_one(c) == pytest.approx(0.01639344262295, rel=REL)


def test_candidate_in_both_legs_outranks_single_leg_leader() -> None:
    # 0.7/62 + 0.3/61 = 0.0112903 + 0.0049180 = 0.0162083...
    both = cand(vector_rank=2, bm25_rank=1, rowid=1)
    vec_only = cand(vector_rank=1, rowid=2)  # 0.7/61 = 0.011475...
    bm25_only = cand(bm25_rank=2, rowid=3)  # 0.3/62 = 0.004838...
    out = rrf_fuse([vec_only, bm25_only, both], SEED_RECIPE)
    assert [c.rowid for c in out] == [2, 3, 1]  # the stage scores in place, it does not sort
    assert both.score == pytest.approx(0.01620835536753, rel=REL)
    assert vec_only.score == pytest.approx(0.01147540983607, rel=REL)
    assert bm25_only.score == pytest.approx(0.00483870967742, rel=REL)


def test_previous_score_is_overwritten() -> None:
    c = cand(bm25_rank=1)
    c.score = 123.0
    # 0.3/61 = 0.0049180327...
    assert fuse_one(c) == pytest.approx(0.00491803278689, rel=REL)


def test_custom_weights_and_k_via_replace() -> None:
    cfg = replace(SEED_RECIPE, vector_weight=0.5, bm25_weight=0.5, rrf_k=10.0)
    # 0.5/(10+1) + 0.5/(10+1) = 1/11 = 0.0909090909...
    assert fuse_one(cand(vector_rank=1, bm25_rank=1), cfg) == pytest.approx(0.09090909090909)
    # 0.5/(10+4) = 0.0357142857...
    assert fuse_one(cand(bm25_rank=4), cfg) == pytest.approx(0.03571428571429, rel=REL)
    # the default recipe is untouched
    assert SEED_RECIPE.vector_weight == 0.7


def test_custom_pinned_boost_via_replace() -> None:
    cfg = replace(SEED_RECIPE, pinned_boost=2.0)
    # 2 × 0.3/(60+2) = 0.6/62 = 0.0096774193...
    c = cand(bm25_rank=2, memory_type=MemoryType.PINNED)
    assert fuse_one(c, cfg) == pytest.approx(0.00967741935484, rel=REL)


def test_zero_bm25_weight_ignores_keyword_leg() -> None:
    cfg = replace(SEED_RECIPE, bm25_weight=0.0)
    # 0.7/62 + 0/61 = 0.0112903225...
    assert fuse_one(cand(vector_rank=2, bm25_rank=1), cfg) == pytest.approx(
        0.01129032258065, rel=REL
    )


def test_turns_that_state_a_replaced_value_or_nothing_weigh_less_by_default() -> None:
    replaced = Memory(content="user: I live in Berlin", memory_type=MemoryType.SESSION)
    replaced.superseded_by = "the memory of the move"
    empty = Memory(content="assistant: Big change!", memory_type=MemoryType.SESSION)
    empty.importance = 0.0
    assert type_boost(replaced, DEFAULT_RECIPE) == 0.5
    assert type_boost(empty, DEFAULT_RECIPE) == 0.1
    assert type_boost(replaced, SEED_RECIPE) == type_boost(empty, SEED_RECIPE) == 1.0
    assert type_boost(Memory(content="x", memory_type=MemoryType.PINNED), DEFAULT_RECIPE) == 1.5
    # distilled memories, superseding ones included, are peers of the turns they came from
    superseding = Memory(
        content="The user prefers tea now",
        memory_type=MemoryType.INSIGHT,
        relations=[Relation(relation_type=RelationType.SUPERSEDES, target_id="old")],
    )
    assert type_boost(superseding, DEFAULT_RECIPE) == 1.0
    assert type_boost(Memory(content="x", memory_type=MemoryType.SESSION), DEFAULT_RECIPE) == 1.0


def test_one_outlier_does_not_push_a_two_leg_match_under_the_default_floor() -> None:
    """Convex scores are stretched per leg, so the default recipe's floor is 0.2, not 0.3.

    Leg scores (vector cosine, BM25): an outlier that matches both legs far
    better than the rest (1.0, 20), a turn both legs found (0.4, 5), and the
    weakest of each leg (0.2, 0). Normalised: the turn is 0.5 · 0.25 + 0.5 ·
    0.25 = 0.25 on a range [0, 1], above the default 0.2 and below the seed's 0.3.
    """

    rows = [(1, 1.0, 20.0), (2, 0.4, 5.0), (3, 0.2, None), (4, None, 0.0)]
    candidates = [
        Candidate(
            rowid=rowid,
            memory=Memory(content=f"memory {rowid}", memory_type=MemoryType.SESSION),
            vector_score=vector,
            bm25_score=bm25,
        )
        for rowid, vector, bm25 in rows
    ]
    fused = rrf_normalize(convex_fuse(candidates, DEFAULT_RECIPE), DEFAULT_RECIPE)
    assert [round(c.score, 6) for c in fused] == [1.0, 0.25, 0.0, 0.0]
    kept = min_score_filter(fused, DEFAULT_RECIPE.min_score)
    assert [c.rowid for c in kept] == [1, 2]
    seed_floor = min_score_filter(fused, SEED_RECIPE.min_score)  # a filter changes no score
    assert [c.rowid for c in seed_floor] == [1]
