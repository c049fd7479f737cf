"""Reading the recent conversation from a Claude Code transcript, within the seed's limits."""

from __future__ import annotations

import json
from pathlib import Path

from cc_transcript import Transcript, conversation, text_block

from memoryd.text.transcript import (
    MAX_SCAN_BYTES,
    MAX_TURN_CHARS,
    PRE_COMPACT_TURNS,
    STOP_TURNS,
    inline_turns,
    recent_turns,
)


def test_conversation_turns_only_in_order_with_their_dates(tmp_path: Path) -> None:
    path = conversation(tmp_path / "t.jsonl").write()
    turns = recent_turns(path, STOP_TURNS)
    assert [(t.role, t.content) for t in turns] == [
        (
            "user",
            "I always use pnpm, never npm, in this repo. Can you check why the billing tests fail?",
        ),
        (
            "assistant",
            "I'll run the billing tests first.\n\n"
            "The VAT table has no 'eu' key; the invoice code expects it.",
        ),
        ("user", "Use the country code instead."),
        ("assistant", "Done: invoices now look up VAT by country code and the tests pass."),
        ("user", "We deploy the billing service to eu-west-1 with GitHub Actions."),
        ("assistant", "Noted: billing deploys to eu-west-1 through GitHub Actions."),
    ]
    assert turns[0].created_at is not None and turns[0].created_at.endswith("Z")
    assert turns[0].message() == {
        "role": "user",
        "content": turns[0].content,
        "created_at": turns[0].created_at,
    }


def test_the_last_turns_only_each_cut_to_size(tmp_path: Path) -> None:
    t = Transcript(tmp_path / "long.jsonl")
    for i in range(30):
        t.user(f"question {i} " + "q" * 3000)
        t.say(f"answer {i}")
    path = t.write()
    stop = recent_turns(path, STOP_TURNS)
    assert len(stop) == STOP_TURNS
    assert stop[0].content.startswith("question 25 ") and stop[-1].content == "answer 29"
    assert all(len(turn.content) <= MAX_TURN_CHARS for turn in stop)
    assert len(recent_turns(path, PRE_COMPACT_TURNS)) == PRE_COMPACT_TURNS
    assert recent_turns(path, 0) == []


def test_injected_recall_is_not_captured_back(tmp_path: Path) -> None:
    t = Transcript(tmp_path / "t.jsonl")
    t.user(
        "<memoryd-context>\nrecalled: prefers tabs\n</memoryd-context>\nWhat is the build command?"
    )
    t.say("make build")
    turns = recent_turns(t.write(), STOP_TURNS)
    assert turns[0].content == "What is the build command?"


def test_huge_tool_results_and_a_huge_file_stay_bounded(tmp_path: Path) -> None:
    t = Transcript(tmp_path / "big.jsonl")
    t.user("Please read the dump and tell me the total.")
    t.assistant(text_block("Reading it."))
    for _ in range(3):
        # a line (result and toolUseResult) of 2.4 MB: past the entry limit, not parsed
        t.tool_round("Read", "x" * (1200 * 1024))
    t.say("The total is 42.")
    path = t.write()
    turns = recent_turns(path, STOP_TURNS)
    assert [turn.content for turn in turns] == [
        "Please read the dump and tell me the total.",
        "Reading it.\n\nThe total is 42.",
    ]
    # a file far past the scan limit: only its end is read
    with path.open("a", encoding="utf-8") as out:
        filler = json.dumps({"type": "progress", "data": "y" * 1000})
        for _ in range((MAX_SCAN_BYTES // 1000) + 2000):
            out.write(filler + "\n")
        out.write(
            json.dumps({"type": "user", "message": {"role": "user", "content": "late question"}})
            + "\n"
        )
    turns = recent_turns(path, STOP_TURNS)
    # the earlier turns lie past the scan limit, back from the end: they are not reached
    assert STOP_TURNS > 1 and [turn.content for turn in turns] == ["late question"]


def test_a_torn_last_line_and_garbage_are_skipped(tmp_path: Path) -> None:
    t = Transcript(tmp_path / "t.jsonl")
    t.user("first question")
    t.say("first answer")
    path = t.write()
    with path.open("a", encoding="utf-8") as out:
        out.write("not json\n[1, 2]\n")
        out.write('{"type": "user", "message": {"role": "user", "content": "cut mid-wr')
    assert [turn.content for turn in recent_turns(path, STOP_TURNS)] == [
        "first question",
        "first answer",
    ]


def test_inline_messages_when_there_is_no_file() -> None:
    payload = {
        "messages": [
            {"role": "system", "content": "ignored"},
            {"role": "user", "content": "hello"},
            {"role": "user", "content": "again"},
            {"role": "assistant", "content": "hi"},
            "junk",
        ]
    }
    turns = inline_turns(payload, STOP_TURNS)
    assert [(t.role, t.content) for t in turns] == [("user", "hello\n\nagain"), ("assistant", "hi")]
    assert inline_turns({}, STOP_TURNS) == []
