"""Stages 2–12 chained in the pipeline's order on hand-built candidates.

Four memories, all working tier, 30 days old, importance 0, confidence 0,
never recalled, not pinned, no reranker, limit 2:

    A: vector #1 + BM25 #1      RRF 1/61           → norm 1.0
    B: vector #2, 1,000 chars   RRF 0.7/62         → norm (0.4/62)/(43.7/3782) = 244/437 = 0.5583524
    C: BM25 #2                  RRF 0.3/62 (min)   → norm 0.0 → dropped by min_score 0.3
    D: vector #3, copy of A     RRF 0.7/63         → norm (24.5/3906)/(43.7/3782) = 0.5428426

    top-k: 2 × 2 = 4 ≥ 3 → A, B, D; rerank skipped; BM25 floor: no pre-rerank score
    decay: recency 0.5 → raw 0.2 < working floor 0.7 → boost 0.3 + 0.7·0.7 = 0.79
    importance 0: × 0.7   → overall × 0.79 × 0.7 = × 0.553
    A = 0.553 ; B = 0.5583524 × 0.553 / 2 (1,000 chars) = 0.1543844
    D = 0.5428426 × 0.553 = 0.3001920
    hard cutoff 0.005 keeps all; MMR: D has A's words → 0.3001920 × 0.5 = 0.1500960
    sorted: A 0.553, B 0.1543844, D 0.1500960 → limit 2 → A, B
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memoryd.models import Memory, MemoryType, Tier
from memoryd.retrieve.bm25_floor import bm25_floor
from memoryd.retrieve.candidate import Candidate
from memoryd.retrieve.config import SEED_RECIPE
from memoryd.retrieve.cross_encoder import cross_encoder_rerank
from memoryd.retrieve.decay import decay_boost
from memoryd.retrieve.hard_cutoff import hard_cutoff
from memoryd.retrieve.importance import importance_weight
from memoryd.retrieve.length_norm import length_norm
from memoryd.retrieve.min_score import min_score_filter
from memoryd.retrieve.mmr import mmr_diversity
from memoryd.retrieve.rrf_fusion import rrf_fuse
from memoryd.retrieve.rrf_normalize import rrf_normalize
from memoryd.retrieve.topk_cap import topk_cap

NOW = datetime(2025, 6, 1, tzinfo=UTC)
LIMIT = 2


def mem(content: str) -> Memory:
    return Memory(
        content=content,
        memory_type=MemoryType.INSIGHT,
        tier=Tier.WORKING,
        importance=0.0,
        confidence=0.0,
        created_at=NOW - timedelta(days=30),
    )


def test_stages_in_order() -> None:
    cfg = SEED_RECIPE
    a_text = "the deploy key lives in the ops vault"
    cands = [
        Candidate(rowid=1, memory=mem(a_text), vector_rank=1, bm25_rank=1),
        Candidate(rowid=2, memory=mem("b" * 1000), vector_rank=2),
        Candidate(rowid=3, memory=mem("keyword only hit"), bm25_rank=2),
        Candidate(rowid=4, memory=mem(a_text.upper()), vector_rank=3),
    ]
    found = rrf_normalize(rrf_fuse(cands, cfg), cfg)
    assert [c.score for c in found] == pytest.approx(
        [1.0, 0.55835240274600, 0.0, 0.54284261378083], rel=1e-12
    )
    found = min_score_filter(found, cfg.min_score)
    assert [c.rowid for c in found] == [1, 2, 4]
    found = topk_cap(found, LIMIT, cfg.topk_multiplier)
    found = bm25_floor(cross_encoder_rerank(found, "deploy key", None, cfg), cfg)
    found = length_norm(importance_weight(decay_boost(found, NOW)))
    # A 1 × 0.553 ; B 0.5583524 × 0.553 / 2 ; D 0.5428426 × 0.553
    assert [c.score for c in found] == pytest.approx(
        [0.553, 0.15438443935927, 0.30019196542080], rel=1e-9
    )
    found = hard_cutoff(found, cfg.hard_cutoff)
    assert len(found) == 3
    found = mmr_diversity(found, LIMIT, cfg)
    assert [c.rowid for c in found] == [1, 2]
    assert [c.score for c in found] == pytest.approx([0.553, 0.15438443935927], rel=1e-9)
