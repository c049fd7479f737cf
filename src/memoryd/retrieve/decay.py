"""Stage 8: Weibull time decay, so recent, recalled and important memories rise.

    composite = 0.4·recency + 0.3·frequency + 0.3·intrinsic, at least the tier's floor
    recency   = exp(-λ · t^β),  λ = ln 2 / (half_life · exp(1.5 · importance))
    frequency = (1 - exp(-access_count / 5)) · gap_factor
    intrinsic = importance · confidence
    score    ×= 0.3 + 0.7 · composite

``t`` is days since the memory was last relevant: the later of when it was
last recalled and when it happened (``valid_from``, else ``created_at``).
The seed leaves ``gap_factor`` open; here it is ``1 / (1 + days since last
recall / half_life)``, so a memory recalled often but long ago stops
counting as frequent.
"""

from __future__ import annotations

import math
from datetime import datetime

from memoryd.models import Memory, Tier
from memoryd.retrieve.candidate import Candidate

HALF_LIFE_DAYS = 30.0
IMPORTANCE_MODULATION = 1.5
BETA = {Tier.CORE: 0.8, Tier.WORKING: 1.0, Tier.PERIPHERAL: 1.3}
FLOOR = {Tier.CORE: 0.9, Tier.WORKING: 0.7, Tier.PERIPHERAL: 0.5}
RECENCY_WEIGHT = 0.4
FREQUENCY_WEIGHT = 0.3
INTRINSIC_WEIGHT = 0.3
FREQUENCY_SCALE = 5.0
SEARCH_BOOST_MIN = 0.3
DAY_S = 86_400.0


def _days(later: datetime, earlier: datetime) -> float:
    return max(0.0, (later - earlier).total_seconds() / DAY_S)


def recency(memory: Memory, now: datetime) -> float:
    happened = memory.said_at
    reference = max(happened, memory.last_accessed_at or happened)
    t = _days(now, reference)
    lam = math.log(2) / (HALF_LIFE_DAYS * math.exp(IMPORTANCE_MODULATION * memory.importance))
    return math.exp(-lam * t ** BETA[memory.tier])


def frequency(memory: Memory, now: datetime) -> float:
    if memory.access_count <= 0 or memory.last_accessed_at is None:
        return 0.0
    gap_factor = 1.0 / (1.0 + _days(now, memory.last_accessed_at) / HALF_LIFE_DAYS)
    return (1.0 - math.exp(-memory.access_count / FREQUENCY_SCALE)) * gap_factor


def composite(memory: Memory, now: datetime) -> float:
    value = (
        RECENCY_WEIGHT * recency(memory, now)
        + FREQUENCY_WEIGHT * frequency(memory, now)
        + INTRINSIC_WEIGHT * memory.importance * memory.confidence
    )
    return max(value, FLOOR[memory.tier])


def boost(memory: Memory, now: datetime) -> float:
    return SEARCH_BOOST_MIN + (1.0 - SEARCH_BOOST_MIN) * composite(memory, now)


def decay_boost(candidates: list[Candidate], now: datetime) -> list[Candidate]:
    for c in candidates:
        c.score *= boost(c.mem, now)
    return candidates
