"""Search recipes: every knob of the 12 stages in one declarative object.

The defaults are the seed's constants. A recipe is a value, so a caller (or
a benchmark) can derive a variant with ``dataclasses.replace`` and the
pipeline code never changes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from memoryd.models import SpaceType

# stage 1: each leg fetches limit × FETCH_MULTIPLIER candidates
FETCH_MULTIPLIER = 3
# stage 2
RRF_K = 60.0
VECTOR_WEIGHT = 0.7
BM25_WEIGHT = 0.3
PINNED_BOOST = 1.5
# stage 3
RRF_SCALE = 40.0
# stage 4
MIN_SCORE = 0.3
# stage 5: keep limit × TOPK_MULTIPLIER for rerank
TOPK_MULTIPLIER = 2
# stage 6
RERANK_WEIGHT = 0.6
RERANK_TIMEOUT_S = 5.0
# stage 7
BM25_FLOOR_THRESHOLD = 0.75
BM25_FLOOR_KEEP = 0.95
# stage 11
HARD_CUTOFF = 0.005
# stage 12
MMR_JACCARD = 0.85
MMR_PENALTY = 0.5
# cross-space merge
SPACE_WEIGHTS: dict[SpaceType, float] = {
    SpaceType.PERSONAL: 1.0,
    SpaceType.TEAM: 0.8,
    SpaceType.ORGANIZATION: 0.6,
}

DEFAULT_LIMIT = 20


@dataclass(frozen=True)
class SearchConfig:
    fetch_multiplier: int = FETCH_MULTIPLIER
    rrf_k: float = RRF_K
    vector_weight: float = VECTOR_WEIGHT
    bm25_weight: float = BM25_WEIGHT
    pinned_boost: float = PINNED_BOOST
    rrf_scale: float = RRF_SCALE
    min_score: float = MIN_SCORE
    topk_multiplier: int = TOPK_MULTIPLIER
    rerank_weight: float = RERANK_WEIGHT
    bm25_floor_threshold: float = BM25_FLOOR_THRESHOLD
    bm25_floor_keep: float = BM25_FLOOR_KEEP
    decay: bool = True
    importance_weight: bool = True
    length_norm: bool = True
    hard_cutoff: float = HARD_CUTOFF
    mmr_jaccard: float = MMR_JACCARD
    mmr_penalty: float = MMR_PENALTY
    space_weights: dict[SpaceType, float] = field(default_factory=lambda: dict(SPACE_WEIGHTS))


DEFAULT_RECIPE = SearchConfig()
