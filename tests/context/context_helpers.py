"""Data for the context engine tests: a long dated two-person conversation as messages.

LoCoMo's first development conversation when the development data sits beside
the checkout (``../shared/data``, where the benchmarks read it); otherwise a
generated one of the same shape (24 dated sessions of 25 turns, names,
numbers and places in every turn), so the tests run on any clone.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

# beside the checkout, as the benchmarks expect it (bench.common.SHARED_DATA)
LOCOMO = Path(__file__).resolve().parents[3] / "shared" / "data" / "locomo_dev.json"

PEOPLE = ("Caroline", "Melanie")
TOPICS = (
    "I went to the {n}th meetup of the pottery club in {place} with {friend} yesterday.",
    "My sister {friend} ran {n} kilometres along the river in {place} last weekend.",
    "We booked a cabin near {place} for {n} nights in the spring, {friend} is coming too.",
    "The adoption agency in {place} called: the interview is on the {n}th at ten.",
    "{friend} lent me a book about {place}; I read {n} chapters on the train.",
)
PLACES = ("Boston", "Lisbon", "Kyoto", "Oslo", "Denver", "Porto", "Austin")
FRIENDS = ("Ana", "Tom", "Priya", "Jonas", "Mei", "Luis")


def generated_turns(sessions: int = 24, per_session: int = 25) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    start = datetime(2023, 5, 8, 13, 56)
    for s in range(sessions):
        when = start + timedelta(days=9 * s, hours=s % 5)
        for t in range(per_session):
            i = s * per_session + t
            text = TOPICS[i % len(TOPICS)].format(
                n=i + 3, place=PLACES[i % len(PLACES)], friend=FRIENDS[(i // 2) % len(FRIENDS)]
            )
            out.append(
                {
                    "id": f"D{s + 1}:{t + 1}",
                    "role": PEOPLE[t % 2],
                    "content": text,
                    "created_at": when.isoformat() + "Z",
                }
            )
    return out


def locomo_turns(limit: int | None = None) -> list[dict[str, Any]]:
    """The first development conversation of LoCoMo as messages, dated by session."""
    if not LOCOMO.exists():
        out = generated_turns()
        return out[:limit] if limit else out
    data = json.loads(LOCOMO.read_text(encoding="utf-8"))
    conv = data[0]["conversation"]
    out = []
    n = 1
    while f"session_{n}" in conv:
        when = datetime.strptime(conv[f"session_{n}_date_time"], "%I:%M %p on %d %B, %Y")
        for turn in conv[f"session_{n}"]:
            out.append(
                {
                    "id": turn["dia_id"],
                    "role": turn["speaker"],
                    "content": turn["text"],
                    "created_at": when.isoformat() + "Z",
                }
            )
        n += 1
    return out[:limit] if limit else out
