"""The last ordering of a search: what was replaced, and what says nothing, come after."""

from __future__ import annotations

from memoryd.models import Memory, MemoryType
from memoryd.retrieve.pipeline import current_first


def turn(content: str, **fields: object) -> Memory:
    return Memory(content=content, memory_type=MemoryType.SESSION, **fields)


def test_a_turn_of_a_replaced_fact_moves_below_its_replacement() -> None:
    porto = Memory(content="The user moved to Porto", memory_type=MemoryType.INSIGHT)
    berlin = turn("user: I live in Berlin", superseded_by=porto.id)
    job = Memory(content="The user works as a nurse", memory_type=MemoryType.INSIGHT)
    ranked = current_first([(berlin, 1.0), (job, 0.9), (porto, 0.8)])
    assert [m.id for m, _ in ranked] == [job.id, porto.id, berlin.id]
    assert [s for _, s in ranked] == [0.9, 0.8, 0.8]  # still in score order


def test_a_turn_whose_replacement_was_not_found_keeps_its_place() -> None:
    berlin = turn("user: I live in Berlin", superseded_by="not in the results")
    other = turn("user: I like tea")
    assert [m.id for m, _ in current_first([(berlin, 1.0), (other, 0.5)])] == [berlin.id, other.id]


def test_turns_that_say_nothing_come_after_all_content() -> None:
    nice = turn("assistant: Big change!", importance=0.0)
    weak = turn("user: I moved to Oslo")
    ranked = current_first([(nice, 1.0), (weak, 0.1)])
    assert [m.id for m, _ in ranked] == [weak.id, nice.id]
    assert ranked[1][1] == 0.1
