"""Stage 5 of the slow path: is a fact worth keeping at all (seed 000 §1.1)?

    composite = 0.1·utility + 0.1·confidence + 0.1·novelty + 0.1·recency + 0.6·type_prior

The seed fixes the weights, the category priors and the balanced preset's
thresholds; it leaves the dimensions' definitions open, so memoryd reads
them as: utility = the fact's importance; confidence = how sure extraction
is (an LLM's word, or the rule family's); novelty = 1 - the best cosine to
an existing memory of the space; recency = how recent the conversation is
(1 now, halving every ``RECENCY_HALF_LIFE_DAYS``).

Below ``reject`` a fact is rejected; at or above ``admit`` it is admitted.
Between the two the type prior has not decided it, so novelty does: new
information gets in, a near-restatement of what is known does not (the
reconciler would only SKIP or SUPPORT it, and SUPPORT needs no new memory).
Rejected facts are counted by the task, never silently dropped.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from memoryd.models import Category

W_UTILITY = 0.1
W_CONFIDENCE = 0.1
W_NOVELTY = 0.1
W_RECENCY = 0.1
W_TYPE_PRIOR = 0.6
CATEGORY_PRIORS: dict[Category, float] = {
    Category.PROFILE: 0.95,
    Category.PREFERENCES: 0.90,
    Category.PATTERNS: 0.85,
    Category.CASES: 0.80,
    Category.ENTITIES: 0.75,
    Category.EVENTS: 0.45,
}
RECENCY_HALF_LIFE_DAYS = 30.0
# between the thresholds, a fact at least this new is admitted
GRAY_ZONE_MIN_NOVELTY = 0.5


@dataclass(frozen=True)
class Preset:
    reject: float
    admit: float


PRESETS = {
    "balanced": Preset(reject=0.45, admit=0.60),
    "permissive": Preset(reject=0.35, admit=0.50),
    "strict": Preset(reject=0.55, admit=0.70),
}
DEFAULT_PRESET = "balanced"


@dataclass(frozen=True)
class Admission:
    admitted: bool
    score: float
    reason: str


def recency(age_days: float) -> float:
    return math.pow(0.5, max(age_days, 0.0) / RECENCY_HALF_LIFE_DAYS)


def composite(
    category: Category, utility: float, confidence: float, novelty: float, age_days: float = 0.0
) -> float:
    return (
        W_UTILITY * utility
        + W_CONFIDENCE * confidence
        + W_NOVELTY * novelty
        + W_RECENCY * recency(age_days)
        + W_TYPE_PRIOR * CATEGORY_PRIORS[category]
    )


def admit(
    category: Category,
    utility: float,
    confidence: float,
    novelty: float,
    age_days: float = 0.0,
    preset: Preset = PRESETS[DEFAULT_PRESET],
) -> Admission:
    score = round(composite(category, utility, confidence, novelty, age_days), 4)
    if score < preset.reject:
        return Admission(False, score, f"score {score} below {preset.reject}")
    if score >= preset.admit:
        return Admission(True, score, "admitted")
    if novelty >= GRAY_ZONE_MIN_NOVELTY:
        return Admission(True, score, "admitted in the gray zone: new information")
    return Admission(False, score, f"gray zone and little novelty ({novelty:.2f})")
