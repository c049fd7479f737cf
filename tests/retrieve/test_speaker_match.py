"""Stage after fusion, speaker match: the turns of a speaker the query names × boost."""

from __future__ import annotations

from dataclasses import replace

import pytest

from memoryd.models import Memory, MemoryType
from memoryd.retrieve.candidate import Candidate
from memoryd.retrieve.config import DEFAULT_RECIPE, SEED_RECIPE, SPEAKER_BOOST
from memoryd.retrieve.speaker_match import named_speakers, speaker_match, speaker_of

CFG = replace(SEED_RECIPE, speaker_boost=2.0)


def turn(content: str, rowid: int = 1, score: float = 0.5) -> Candidate:
    memory = Memory(content=content, memory_type=MemoryType.SESSION, session_id="s1")
    return Candidate(rowid=rowid, memory=memory, score=score)


def test_speaker_of_a_named_turn_only() -> None:
    assert speaker_of(turn("Melanie: I ran a charity race").mem) == "melanie"
    assert speaker_of(turn("Mary Ann: hello").mem) == "mary ann"
    # generic roles are parts in the exchange, not people
    assert speaker_of(turn("user: I love coffee").mem) is None
    assert speaker_of(turn("assistant: sure").mem) is None
    # a distilled memory has no speaker, whatever its text looks like
    fact = Memory(content="Melanie: likes pottery", memory_type=MemoryType.INSIGHT)
    assert speaker_of(fact) is None
    assert speaker_of(turn("no speaker here").mem) is None


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("What does Melanie do to destress?", {"melanie"}),
        ("What do Melanie's kids like?", {"melanie"}),  # possessive
        ("how did MELANIE and caroline meet", {"melanie", "caroline"}),
        ("What does Mel like?", set()),  # part of a word is no name
        ("Where does Mary Ann live?", {"mary ann"}),
        ("Where does Ann live?", set()),  # the whole name, not a part of it
    ],
)
def test_named_speakers(query: str, expected: set[str]) -> None:
    assert named_speakers(query, ["melanie", "caroline", "mary ann"]) == expected


def test_the_named_speakers_turns_rise_and_the_replies_do_not() -> None:
    own = turn("Melanie: I've been running farther to de-stress", rowid=1, score=0.4)
    reply = turn("Caroline: That's awesome, Melanie!", rowid=2, score=0.6)
    out = speaker_match([own, reply], "What does Melanie do to destress?", CFG)
    # 0.4 × 2 = 0.8 ; the reply keeps 0.6
    assert [c.score for c in out] == pytest.approx([0.8, 0.6])


def test_nothing_changes_without_a_named_speaker() -> None:
    cands = [turn("Melanie: I paint", rowid=1, score=0.4), turn("user: hi", rowid=2, score=0.3)]
    speaker_match(cands, "what does the user paint?", CFG)
    assert [c.score for c in cands] == [0.4, 0.3]


def test_seed_recipe_is_a_no_op_and_default_boosts() -> None:
    c = turn("Melanie: I paint", score=0.5)
    speaker_match([c], "What does Melanie paint?", SEED_RECIPE)
    assert c.score == 0.5
    speaker_match([c], "What does Melanie paint?", DEFAULT_RECIPE)
    assert c.score == pytest.approx(0.5 * SPEAKER_BOOST)
