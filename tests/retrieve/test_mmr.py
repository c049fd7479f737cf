"""Stage 12, MMR diversity: word-level Jaccard > 0.85 with a better result → score × 0.5,
then re-sort and truncate to the limit."""

from __future__ import annotations

from dataclasses import replace

import pytest

from memoryd.models import Memory
from memoryd.retrieve.candidate import Candidate
from memoryd.retrieve.config import SEED_RECIPE
from memoryd.retrieve.mmr import jaccard, mmr_diversity, word_set

WORDS = [f"w{i}" for i in range(1, 21)]  # w1 … w20


def cand(rowid: int, content: str, score: float) -> Candidate:
    return Candidate(rowid=rowid, memory=Memory(content=content), score=score)


def text(words: list[str]) -> str:
    return " ".join(words)


def test_word_set_is_lowercase_words() -> None:
    assert word_set("Hello, World! hello") == frozenset({"hello", "world"})


def test_jaccard() -> None:
    # {a,b,c} ∩ {b,c,d} = {b,c} (2); ∪ = {a,b,c,d} (4) → 0.5
    assert jaccard(frozenset("abc"), frozenset("bcd")) == 0.5
    assert jaccard(frozenset("ab"), frozenset("ab")) == 1.0
    assert jaccard(frozenset("ab"), frozenset("cd")) == 0.0


def test_near_duplicate_halved_resorted_truncated() -> None:
    a = cand(1, text(WORDS), 0.9)
    # w1…w19 + x: ∩ = 19, ∪ = 21 → 19/21 = 0.9048 > 0.85 → 0.8 × 0.5 = 0.4
    b = cand(2, text([*WORDS[:19], "x"]), 0.8)
    c = cand(3, "completely different topic here", 0.5)
    out = mmr_diversity([a, b, c], 3, SEED_RECIPE)
    assert [x.rowid for x in out] == [1, 3, 2]  # 0.9, 0.5, 0.4
    assert [x.score for x in out] == pytest.approx([0.9, 0.5, 0.4])


def test_truncates_to_limit_after_penalty() -> None:
    a = cand(1, text(WORDS), 0.9)
    b = cand(2, text([*WORDS[:19], "x"]), 0.8)  # → 0.4
    c = cand(3, "completely different topic here", 0.5)
    out = mmr_diversity([a, b, c], 2, SEED_RECIPE)
    assert [x.rowid for x in out] == [1, 3]


def test_exactly_0_85_is_not_penalised() -> None:
    # w1…w20 vs w1…w17: ∩ = 17, ∪ = 20 → 17/20 = 0.85, not > 0.85 → untouched
    a = cand(1, text(WORDS), 0.9)
    b = cand(2, text(WORDS[:17]), 0.8)
    out = mmr_diversity([a, b], 5, SEED_RECIPE)
    assert [x.score for x in out] == [0.9, 0.8]


def test_just_above_0_85_is_penalised() -> None:
    # w1…w20 vs w1…w18: 18/20 = 0.9 > 0.85 → 0.8 × 0.5 = 0.4
    a = cand(1, text(WORDS), 0.9)
    b = cand(2, text(WORDS[:18]), 0.8)
    out = mmr_diversity([a, b], 5, SEED_RECIPE)
    assert [x.score for x in out] == pytest.approx([0.9, 0.4])


def test_sorted_first_so_the_better_copy_survives() -> None:
    # input order has the weaker copy first; after sorting the 0.9 one ranks higher
    weak = cand(1, "The user prefers dark mode in every editor", 0.6)
    strong = cand(2, "the user prefers DARK mode, in every editor!", 0.9)
    out = mmr_diversity([weak, strong], 5, SEED_RECIPE)
    # same word set → Jaccard 1.0 > 0.85 → weak: 0.6 × 0.5 = 0.3
    assert [x.rowid for x in out] == [2, 1]
    assert [x.score for x in out] == pytest.approx([0.9, 0.3])


def test_compared_against_all_higher_ranked() -> None:
    # c resembles a (rank 1) but not b (rank 2): still penalised
    a = cand(1, text(WORDS), 0.9)
    b = cand(2, "unrelated words entirely", 0.8)
    c = cand(3, text(WORDS), 0.7)  # Jaccard(a, c) = 1 → 0.35
    out = mmr_diversity([a, b, c], 5, SEED_RECIPE)
    assert [x.rowid for x in out] == [1, 2, 3]
    assert [x.score for x in out] == pytest.approx([0.9, 0.8, 0.35])


def test_penalty_applied_once_for_several_matches() -> None:
    # c matches both a and b: × 0.5 once → 0.7 × 0.5 = 0.35 ; b matches a → 0.4
    a = cand(1, text(WORDS), 0.9)
    b = cand(2, text(WORDS), 0.8)
    c = cand(3, text(WORDS), 0.7)
    out = mmr_diversity([a, b, c], 5, SEED_RECIPE)
    assert [x.score for x in out] == pytest.approx([0.9, 0.4, 0.35])


def test_penalty_can_reorder_below_distinct_result() -> None:
    # b: 0.85 × 0.5 = 0.425 < c's 0.43 → c moves above b
    a = cand(1, text(WORDS), 0.9)
    b = cand(2, text(WORDS), 0.85)
    c = cand(3, "a distinct fact", 0.43)
    out = mmr_diversity([a, b, c], 5, SEED_RECIPE)
    assert [x.rowid for x in out] == [1, 3, 2]


def test_custom_penalty_and_threshold() -> None:
    cfg = replace(SEED_RECIPE, mmr_jaccard=0.5, mmr_penalty=0.25)
    # w1…w20 vs w1…w12: 12/20 = 0.6 > 0.5 → 0.8 × 0.25 = 0.2
    a = cand(1, text(WORDS), 0.9)
    b = cand(2, text(WORDS[:12]), 0.8)
    out = mmr_diversity([a, b], 5, cfg)
    assert [x.score for x in out] == pytest.approx([0.9, 0.2])


def test_fewer_than_limit_and_empty() -> None:
    assert mmr_diversity([], 5, SEED_RECIPE) == []
    only = cand(1, "one fact", 0.4)
    assert mmr_diversity([only], 5, SEED_RECIPE) == [only]
    assert only.score == 0.4
