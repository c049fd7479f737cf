"""Stage after fusion, date match: memories of a date the query names × boost."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest

from memoryd.models import Memory, MemoryType
from memoryd.retrieve.candidate import Candidate
from memoryd.retrieve.config import SEED_RECIPE
from memoryd.retrieve.date_match import DateRef, date_match, dates_in

CFG = replace(SEED_RECIPE, date_boost=2.0)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("What did Melanie show on October 13, 2023?", [DateRef(10, 2023, 13)]),
        ("What did Gina find on 1 February, 2023?", [DateRef(2, 2023, 1)]),
        ("the 3rd of March", [DateRef(3, None, 3)]),
        ("When did Melanie go camping in June?", [DateRef(6)]),
        ("our trip in Sept. 2022", [DateRef(9, 2022)]),
        ("May 2023 was busy", [DateRef(5, 2023)]),
        ("what happened on 2023-05-08", [DateRef(5, 2023, 8)]),
        ("it may rain tomorrow", []),  # the verb
        ("What did I say in May?", [DateRef(5)]),
        ("no dates at all", []),
        ("June or July", [DateRef(6), DateRef(7)]),
    ],
)
def test_dates_in(query: str, expected: list[DateRef]) -> None:
    assert dates_in(query) == expected


def cand(when: datetime, rowid: int, score: float = 0.5) -> Candidate:
    memory = Memory(content="x", memory_type=MemoryType.SESSION, valid_from=when)
    return Candidate(rowid=rowid, memory=memory, score=score)


def test_memories_of_the_named_date_rise_at_its_precision() -> None:
    day = cand(datetime(2023, 10, 13, 10, 31, tzinfo=UTC), 1)
    same_month = cand(datetime(2023, 10, 2, tzinfo=UTC), 2)
    other_year = cand(datetime(2022, 10, 13, tzinfo=UTC), 3)
    date_match([day, same_month, other_year], "on October 13, 2023", CFG)
    assert [c.score for c in (day, same_month, other_year)] == [1.0, 0.5, 0.5]
    # a month alone matches that month of any year
    for c in (day, same_month, other_year):
        c.score = 0.5
    date_match([day, same_month, other_year], "what happened in October?", CFG)
    assert [c.score for c in (day, same_month, other_year)] == [1.0, 1.0, 1.0]


def test_without_valid_from_the_storage_time_counts() -> None:
    stored = Memory(content="x", created_at=datetime(2024, 1, 5, tzinfo=UTC))
    c = Candidate(rowid=1, memory=stored, score=0.25)
    date_match([c], "January 5, 2024", CFG)
    assert c.score == 0.5


def test_no_date_or_seed_recipe_changes_nothing() -> None:
    c = cand(datetime(2023, 6, 1, tzinfo=UTC), 1)
    date_match([c], "what did I do", CFG)
    date_match([c], "in June", SEED_RECIPE)
    assert c.score == 0.5
