"""Stage 8, Weibull decay boost.

    composite = max(floor[tier], 0.4·recency + 0.3·frequency + 0.3·intrinsic)
    recency   = exp(-λ · t^β),  λ = ln 2 / (30 · exp(1.5 · importance))
    β         = 0.8 core | 1.0 working | 1.3 peripheral
    frequency = (1 - exp(-count / 5)) · gap_factor
    intrinsic = importance · confidence
    boost     = 0.3 + 0.7 · composite

``t`` and ``gap_factor`` are left open by the seed; memoryd takes t as days since
the later of the last recall and when the fact happened (valid_from, else
created_at), and gap_factor = 1 / (1 + days since last recall / 30). The tests
for those two choices say so.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memoryd.models import Memory, Tier
from memoryd.retrieve import decay
from memoryd.retrieve.candidate import Candidate

NOW = datetime(2025, 6, 1, 12, 0, tzinfo=UTC)
REL = 1e-9


def mem(
    *,
    days_old: float = 0.0,
    tier: Tier = Tier.WORKING,
    importance: float = 0.0,
    confidence: float = 0.0,
    access_count: int = 0,
    accessed_days_ago: float | None = None,
) -> Memory:
    return Memory(
        content="x",
        tier=tier,
        importance=importance,
        confidence=confidence,
        access_count=access_count,
        created_at=NOW - timedelta(days=days_old),
        last_accessed_at=(
            None if accessed_days_ago is None else NOW - timedelta(days=accessed_days_ago)
        ),
    )


def test_seed_constants() -> None:
    assert decay.HALF_LIFE_DAYS == 30.0
    assert decay.BETA == {Tier.CORE: 0.8, Tier.WORKING: 1.0, Tier.PERIPHERAL: 1.3}
    assert decay.FLOOR == {Tier.CORE: 0.9, Tier.WORKING: 0.7, Tier.PERIPHERAL: 0.5}
    assert decay.SEARCH_BOOST_MIN == 0.3
    assert (decay.RECENCY_WEIGHT, decay.FREQUENCY_WEIGHT, decay.INTRINSIC_WEIGHT) == (
        0.4,
        0.3,
        0.3,
    )


# --- recency --------------------------------------------------------------------------


def test_working_one_half_life_importance_zero_is_half() -> None:
    # λ = ln2 / (30 · e^0) = ln2/30; t^1 = 30 → exp(-ln2) = 0.5
    assert decay.recency(mem(days_old=30, tier=Tier.WORKING), NOW) == pytest.approx(0.5, rel=REL)


def test_working_two_half_lives_is_quarter() -> None:
    # exp(-(ln2/30) · 60) = exp(-2 ln2) = 0.25
    assert decay.recency(mem(days_old=60), NOW) == pytest.approx(0.25, rel=REL)


def test_core_beta_0_8() -> None:
    # exp(-(ln2/30) · 30^0.8) = exp(-ln2 · 30^-0.2) = exp(-0.693147 · 0.506496)
    #   = exp(-0.351076) = 0.7039302...   (slower than the working tier's 0.5)
    r = decay.recency(mem(days_old=30, tier=Tier.CORE), NOW)
    assert r == pytest.approx(0.70393021411995, rel=REL)


def test_peripheral_beta_1_3() -> None:
    # exp(-(ln2/30) · 30^1.3) = exp(-ln2 · 30^0.3) = exp(-0.693147 · 2.772049)
    #   = exp(-1.921436) = 0.1461790...   (faster than the working tier's 0.5)
    r = decay.recency(mem(days_old=30, tier=Tier.PERIPHERAL), NOW)
    assert r == pytest.approx(0.14617909229232, rel=REL)


@pytest.mark.parametrize("tier", list(Tier))
def test_fresh_memory_recency_one(tier: Tier) -> None:
    # t = 0 → exp(0) = 1
    assert decay.recency(mem(days_old=0, tier=tier), NOW) == 1.0


def test_importance_one_stretches_half_life() -> None:
    # λ = ln2 / (30 · e^1.5); λ·30 = ln2 · e^-1.5 = 0.693147 · 0.223130 = 0.154662
    # exp(-0.154662) = 0.8567047...
    r = decay.recency(mem(days_old=30, importance=1.0), NOW)
    assert r == pytest.approx(0.85670465926760, rel=REL)


def test_importance_half() -> None:
    # λ·30 = ln2 · e^-0.75 = 0.693147 · 0.472367 = 0.327420 → exp(-0.327420) = 0.7207813...
    r = decay.recency(mem(days_old=30, importance=0.5), NOW)
    assert r == pytest.approx(0.72078127996049, rel=REL)


def test_importance_one_half_life_is_30_e_1_5_days() -> None:
    # effective half-life = 30 · e^1.5 = 30 · 4.4816891 = 134.4506721 days → recency 0.5
    r = decay.recency(mem(days_old=134.45067211014194, importance=1.0), NOW)
    assert r == pytest.approx(0.5, rel=1e-9)


def test_recency_counts_from_last_recall() -> None:
    # memoryd's choice for t: created 90 days ago, recalled 30 days ago → t = 30 → 0.5
    m = mem(days_old=90, access_count=1, accessed_days_ago=30)
    assert decay.recency(m, NOW) == pytest.approx(0.5, rel=REL)


def test_recency_counts_from_valid_from() -> None:
    # memoryd's choice for t: stored today about something that happened 30 days ago → 0.5
    m = Memory(content="x", tier=Tier.WORKING, importance=0.0, created_at=NOW)
    m.valid_from = NOW - timedelta(days=30)
    assert decay.recency(m, NOW) == pytest.approx(0.5, rel=REL)


def test_future_reference_clamps_to_zero_days() -> None:
    m = mem(days_old=-5)  # created "in the future": t = max(0, -5) = 0 → 1.0
    assert decay.recency(m, NOW) == 1.0


# --- frequency ------------------------------------------------------------------------


def test_frequency_never_recalled() -> None:
    assert decay.frequency(mem(access_count=0), NOW) == 0.0


def test_frequency_count_without_timestamp_is_zero() -> None:
    # memoryd's choice: no last_accessed_at → no gap to measure → 0
    assert decay.frequency(mem(access_count=7), NOW) == 0.0


def test_frequency_recalled_just_now() -> None:
    # (1 - e^(-5/5)) · 1/(1 + 0/30) = 1 - 0.3678794 = 0.6321206
    m = mem(access_count=5, accessed_days_ago=0)
    assert decay.frequency(m, NOW) == pytest.approx(0.63212055882856, rel=REL)


def test_frequency_gap_factor_halves_after_one_half_life() -> None:
    # gap_factor = 1/(1 + 30/30) = 0.5 → 0.6321206 · 0.5 = 0.3160603
    m = mem(days_old=30, access_count=5, accessed_days_ago=30)
    assert decay.frequency(m, NOW) == pytest.approx(0.31606027941428, rel=REL)


def test_frequency_ten_recalls_fifteen_days_ago() -> None:
    # (1 - e^-2) · 1/(1 + 15/30) = 0.8646647 / 1.5 = 0.5764431
    m = mem(days_old=15, access_count=10, accessed_days_ago=15)
    assert decay.frequency(m, NOW) == pytest.approx(0.57644314450892, rel=REL)


# --- composite, floors, boost ---------------------------------------------------------


@pytest.mark.parametrize(
    ("tier", "floor"), [(Tier.CORE, 0.9), (Tier.WORKING, 0.7), (Tier.PERIPHERAL, 0.5)]
)
def test_tier_floor(tier: Tier, floor: float) -> None:
    # a year old, never recalled, importance 0 → 0.4·~0 + 0 + 0 ≈ 0 < floor → floor
    m = mem(days_old=365, tier=tier)
    assert decay.composite(m, NOW) == pytest.approx(floor)
    # boost = 0.3 + 0.7 · floor: core 0.93, working 0.79, peripheral 0.65
    assert decay.boost(m, NOW) == pytest.approx(0.3 + 0.7 * floor)


def test_half_life_working_memory_hits_floor() -> None:
    # raw = 0.4·0.5 + 0.3·0 + 0.3·(0·0.5) = 0.2 < 0.7 → composite 0.7, boost = 0.3 + 0.49 = 0.79
    m = mem(days_old=30, confidence=0.5)
    assert decay.composite(m, NOW) == pytest.approx(0.7)
    assert decay.boost(m, NOW) == pytest.approx(0.79)


def test_composite_above_floor() -> None:
    # fresh (recency 1), 5 recalls just now (0.6321206), importance 1 × confidence 1
    # 0.4·1 + 0.3·0.6321206 + 0.3·1 = 0.4 + 0.1896362 + 0.3 = 0.8896362 > 0.7
    # boost = 0.3 + 0.7 · 0.8896362 = 0.3 + 0.6227453 = 0.9227453
    m = mem(importance=1.0, confidence=1.0, access_count=5, accessed_days_ago=0)
    assert decay.composite(m, NOW) == pytest.approx(0.88963616764857, rel=REL)
    assert decay.boost(m, NOW) == pytest.approx(0.92274531735400, rel=REL)


def test_peripheral_composite_with_intrinsic() -> None:
    # peripheral, importance 0.8, confidence 0.9, 10 days old, never recalled
    # λ = ln2 / (30 · e^1.2) = 0.693147 / 99.603510; t^1.3 = 10^1.3 = 19.952623
    # recency = exp(-0.693147 · 19.952623 / 99.603510) = exp(-0.138850) = 0.8703572
    # composite = 0.4 · 0.8703572 + 0 + 0.3 · 0.72 = 0.3481429 + 0.216 = 0.5641429 > 0.5
    # boost = 0.3 + 0.7 · 0.5641429 = 0.6949000
    m = mem(days_old=10, tier=Tier.PERIPHERAL, importance=0.8, confidence=0.9)
    assert decay.recency(m, NOW) == pytest.approx(0.87035719671281, rel=REL)
    assert decay.composite(m, NOW) == pytest.approx(0.56414287868512, rel=REL)
    assert decay.boost(m, NOW) == pytest.approx(0.69490001507959, rel=REL)


def test_decay_boost_multiplies_scores() -> None:
    a = Candidate(rowid=1, memory=mem(days_old=30), score=0.5)  # 0.5 × 0.79 = 0.395
    b = Candidate(
        rowid=2,
        memory=mem(days_old=10, tier=Tier.PERIPHERAL, importance=0.8, confidence=0.9),
        score=0.8,
    )  # 0.8 × 0.6949000 = 0.5559200
    out = decay.decay_boost([a, b], NOW)
    assert [c.rowid for c in out] == [1, 2]
    assert a.score == pytest.approx(0.395)
    assert b.score == pytest.approx(0.55592001206367, rel=REL)


def test_boost_never_exceeds_one() -> None:
    # composite ≤ 0.4 + 0.3 + 0.3 = 1 → boost ≤ 0.3 + 0.7 = 1.0
    m = mem(tier=Tier.CORE, importance=1.0, confidence=1.0, access_count=1000, accessed_days_ago=0)
    assert decay.boost(m, NOW) <= 1.0
    # (1 - e^-200) rounds to 1.0: composite = 0.4 + 0.3 + 0.3 = 1 → boost 1.0
    assert decay.boost(m, NOW) == pytest.approx(1.0)
