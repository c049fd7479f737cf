"""The first-week set's tuning half, offline: current facts win, in English and in Chinese.

The tuning half (``a``) of ``bench/data/first_week.json`` goes through the
real smart-ingest path (SQLite home, bundled model, rules only) and its
questions through the default search; ``python -m bench first-week`` prints
the same numbers with what went wrong. The rules were written with these
conversations in view, so this guards what they were made for against
regressions; it measures nothing of what users say otherwise: the confirming
half (``b``), written without the rules in view, is read by the report alone
(``python -m bench first-week --half b``). Each language must have no
outdated fact left active, no small talk distilled, no duplicate, no raw
turn of an outdated fact or turn of chatter above the current fact, and the
current fact first among the distilled hits for at least 95 % of questions.
"""

from __future__ import annotations

from typing import Any

import pytest

from bench.first_week import DATA, aggregate, failures, load, run_conversation
from memoryd.embed.local import LocalEmbedder

MIN_TOP_CURRENT = 0.95


@pytest.fixture(scope="module")
def rows(embedder: LocalEmbedder) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for conversation in load(DATA, "a"):
        out += run_conversation(conversation, embedder)
    return out


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_current_facts_win(rows: list[dict[str, Any]], lang: str) -> None:
    mine = [r for r in rows if r["lang"] == lang]
    metrics = aggregate(mine)
    report = "\n".join(failures(mine))
    assert metrics["conversations"] >= 20 and metrics["questions"] >= 20
    assert metrics["stale_active"] == 0, report
    assert metrics["small_talk"] == 0, report
    assert metrics["duplicates"] == 0, report
    assert metrics["stale_turn_above"] == 0, report
    assert metrics["chatter_above"] == 0, report
    assert metrics["top_current"] >= MIN_TOP_CURRENT, report


def test_the_set_covers_what_changes(rows: list[dict[str, Any]]) -> None:
    """Moves, jobs, diets, partners, tools, flips, repeats and small talk."""
    ids = {r["conversation"] for r in rows}
    for topic in ("move", "job", "diet", "rel", "tool", "pref", "repeat", "smalltalk"):
        for lang in ("en", "zh"):
            assert any(i.startswith(f"{lang}-{topic}") for i in ids), (lang, topic)
    assert {r["half"] for r in rows} == {"a"}
