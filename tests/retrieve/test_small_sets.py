"""A new user's first searches run on tiny stores: the right memory must not drop out.

Min-max normalisation maps the weakest candidate to 0, and the floor of
stage 4 then drops it, however relevant. When the vector leg returned fewer
candidates than it asked for, the candidates are all the store holds, so
the default recipe scales them from 0 instead (``anchor_small_sets``).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from memoryd.embed.local import LocalEmbedder
from memoryd.models import Memory, MemoryType
from memoryd.retrieve.candidate import Candidate
from memoryd.retrieve.config import DEFAULT_RECIPE
from memoryd.retrieve.convex_fusion import convex_fuse
from memoryd.retrieve.min_score import min_score_filter
from memoryd.retrieve.rrf_normalize import rrf_normalize
from memoryd.service import MemoryService


def three() -> list[Candidate]:
    """Cosines 0.7 / 0.4 / 0.35 and BM25 5 / - / 2: the second is relevant but weak."""
    rows = [(1, 0.7, 5.0), (2, 0.4, None), (3, 0.35, 2.0)]
    return [
        Candidate(
            rowid=r,
            memory=Memory(content=f"memory {r}", memory_type=MemoryType.PINNED),
            vector_score=v,
            bm25_score=b,
        )
        for r, v, b in rows
    ]


def test_min_max_drops_the_weak_second_of_three() -> None:
    """Min-max: vector (1, 0.1429, 0), BM25 (1, -, 0): fused × 1.5 (pinned) = 1.5, 0.1071, 0,
    then stretched to 1, 0.0714, 0: the second falls under the 0.2 floor."""
    fused = rrf_normalize(convex_fuse(three(), DEFAULT_RECIPE), DEFAULT_RECIPE)
    assert [round(c.score, 4) for c in fused] == [1.0, 0.0714, 0.0]
    assert [c.rowid for c in min_score_filter(fused, DEFAULT_RECIPE.min_score)] == [1]


def test_all_there_is_is_scaled_from_zero() -> None:
    """Anchored: vector (1, 0.5714, 0.5), BM25 (1, -, 0.4): fused 0.5·v + 0.5·b × 1.5 =
    1.5, 0.4286, 0.675; divided by the best: 1, 0.2857, 0.45. All three stay."""
    cfg = DEFAULT_RECIPE
    fused = rrf_normalize(convex_fuse(three(), cfg, exhaustive=True), cfg, exhaustive=True)
    assert [round(c.score, 4) for c in fused] == [1.0, 0.2857, 0.45]
    assert [c.rowid for c in min_score_filter(fused, cfg.min_score)] == [1, 2, 3]
    seed = replace(cfg, anchor_small_sets=False)  # the seed recipe keeps min-max
    plain = rrf_normalize(convex_fuse(three(), seed, exhaustive=True), seed, exhaustive=True)
    assert [round(c.score, 4) for c in plain] == [1.0, 0.0714, 0.0]


@pytest.mark.parametrize(
    ("memories", "query", "relevant", "unrelated"),
    [
        (
            ["I love jazz music", "I enjoy hiking on weekends", "I prefer green tea"],
            "what does the user enjoy",
            [0, 1, 2],
            [],
        ),
        (
            ["I live in Lisbon", "My sister lives in Porto", "I grew up in Faro"],
            "where has the user lived",
            [0, 2],
            [],
        ),
        (
            ["I'm allergic to peanuts", "I don't eat pork", "I love spicy food"],
            "what food should I avoid serving the user",
            [0, 1],
            [],
        ),
        (
            ["My dog is called Rex", "I have a cat named Miso", "I love hiking"],
            "does the user have pets",
            [0, 1],
            [2],
        ),
    ],
)
def test_in_a_store_of_three_no_relevant_memory_is_dropped(
    tmp_path: Path,
    embedder: LocalEmbedder,
    memories: list[str],
    query: str,
    relevant: list[int],
    unrelated: list[int],
) -> None:
    with MemoryService(tmp_path / "home", embedder=embedder) as svc:
        ids = [svc.add(text, category="profile").id for text in memories]
        found = [r.memory.id for r in svc.search(query, limit=10).results]
    assert len(found) < 10
    assert all(ids[i] in found for i in relevant), found
    assert not any(ids[i] in found for i in unrelated), found
