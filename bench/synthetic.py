"""Deterministic, realistic-looking memory text for the speed benchmark.

Sentences are assembled from small vocabularies with a seeded generator, so
every run (on any machine) builds exactly the same stores.
"""

from __future__ import annotations

import random

NAMES = [
    "Alice",
    "Bob",
    "Chen",
    "Dana",
    "Emeka",
    "Farah",
    "Goran",
    "Hana",
    "Ivan",
    "Julia",
    "Kenji",
    "Lena",
    "Mateo",
    "Nadia",
    "Omar",
    "Priya",
    "Quinn",
    "Rosa",
    "Sven",
    "Tara",
]
VERBS = [
    "prefers",
    "started learning",
    "is planning to visit",
    "bought",
    "recommended",
    "finished reading",
    "complained about",
    "wants to try",
    "fixed",
    "deployed",
    "cancelled",
    "scheduled",
    "is allergic to",
    "signed up for",
    "switched to",
]
OBJECTS = [
    "dark roast coffee",
    "a new mechanical keyboard",
    "the Postgres migration",
    "Lisbon",
    "a pottery class",
    "the quarterly report",
    "vegan ramen",
    "Rust",
    "the staging cluster",
    "a road bike",
    "jazz piano lessons",
    "the budget review",
    "a standing desk",
    "the mobile release",
    "oat milk",
    "a Kyoto trip",
    "the onboarding docs",
    "TypeScript",
    "a climbing gym",
    "the API rate limits",
]
WHEN = [
    "yesterday",
    "last week",
    "on Monday",
    "this morning",
    "in March",
    "after lunch",
    "before the holidays",
    "two days ago",
    "on Friday evening",
    "at the weekend",
]
WHY = [
    "because it was cheaper",
    "after a long discussion",
    "to save time",
    "on a friend's advice",
    "since the old one broke",
    "for the team offsite",
    "to prepare for the launch",
    "because of the deadline",
    "",
    "",
    "",
]
QUERIES = [
    "what coffee does the user like",
    "who is planning a trip",
    "what broke recently",
    "which programming language is being learned",
    "what was scheduled for Friday",
    "allergies",
    "what did Priya buy",
    "status of the Postgres migration",
    "hobbies and classes",
    "what happened with the mobile release",
]


def sentences(n: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        why = rng.choice(WHY)
        text = (
            f"{rng.choice(NAMES)} {rng.choice(VERBS)} {rng.choice(OBJECTS)} "
            f"{rng.choice(WHEN)}{' ' + why if why else ''} (note {i})."
        )
        out.append(text)
    return out


def queries(n: int, seed: int = 11) -> list[str]:
    """``n`` questions no other call of a run repeats: each ends with its seed and position,
    so every search embeds its query (the product keeps a cache of recent query vectors,
    and a bench of a few repeated strings would time the cache, not the search)."""
    rng = random.Random(seed)
    return [
        f"{rng.choice(QUERIES)} {rng.choice(NAMES)} {rng.choice(WHEN)} (case {seed}-{i})"
        if i % 2
        else f"{rng.choice(QUERIES)} (case {seed}-{i})"
        for i in range(n)
    ]
