"""The four conversation stages end to end: a real store, the bundled model, real ingest.

A two-person chat over two days; each question names a speaker or a date,
or asks about what was said just after its words. The control is the
default recipe with the four stages off: each question's answer ranks
higher with them than without.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

from memoryd.retrieve.config import DEFAULT_RECIPE, SearchConfig
from memoryd.service import MemoryService

WITHOUT = replace(
    DEFAULT_RECIPE, speaker_boost=1.0, date_boost=1.0, session_support=0.0, neighbour_support=0.0
)
DAY_1 = datetime(2023, 7, 3, 13, 36, tzinfo=UTC)
DAY_2 = datetime(2023, 10, 13, 10, 31, tzinfo=UTC)
CHAT_1 = [
    ("Caroline", "Hey Melanie! How was your weekend? Still running every day?"),
    ("Melanie", "It was lovely. Pottery class is my favourite way to unwind these days."),
    ("Caroline", "That's awesome, Melanie! Running and pottery, you keep busy."),
    ("Melanie", "I painted a lake at sunrise last week, it calmed me down."),
]
CHAT_2 = [
    ("Caroline", "I made something for the local church this month."),
    ("Melanie", "Oh nice, what was it?"),
    ("Caroline", "A stained glass window with a rising sun, it took me weeks."),
    ("Melanie", "I painted a lake at sunrise again this morning."),
]


def ingest(service: MemoryService) -> None:
    for number, (date, chat) in enumerate(((DAY_1, CHAT_1), (DAY_2, CHAT_2)), 1):
        for speaker, text in chat:
            service.ingest(
                [{"role": speaker, "content": text}],
                session_id=f"s{number}",
                dates=date,
                mode="raw",
            )


def rank_of(service: MemoryService, query: str, needle: str, config: SearchConfig) -> int:
    results = service.search(query, limit=8, config=config, touch=False).results
    lines = [r.memory.content for r in results]
    return next(i for i, line in enumerate(lines) if needle in line)


def test_speaker_date_and_neighbour_signals_lift_the_answer(service: MemoryService) -> None:
    ingest(service)
    cases = [
        # Melanie's own words, not Caroline's reply that names her
        ("Does Melanie like pottery?", "Melanie: It was lovely. Pottery class"),
        # the same sentence on two days: the one of the named day
        ("What did Melanie paint on October 13, 2023?", "again this morning"),
        # the question's words are in one turn, the answer two turns on
        ("What did Caroline make for the local church?", "stained glass window"),
    ]
    for query, needle in cases:
        with_stages = rank_of(service, query, needle, DEFAULT_RECIPE)
        without = rank_of(service, query, needle, WITHOUT)
        assert with_stages < without, (query, with_stages, without)
