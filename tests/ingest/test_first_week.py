"""The first-week set, offline: current facts win, in English and in Chinese.

The 50 scripted conversations of ``bench/data/first_week.json`` go through
the real smart-ingest path (SQLite home, bundled model, rules only) and
their questions through the default search; ``python -m bench first-week``
prints the same numbers with what went wrong. Each language must have no
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
    for conversation in load(DATA):
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
    """Moves, jobs, diets, partners, tools, flips, repeats and small talk, in both halves."""
    ids = {r["conversation"] for r in rows}
    for topic in ("move", "job", "diet", "rel", "tool", "pref", "repeat", "smalltalk"):
        for lang in ("en", "zh"):
            assert any(i.startswith(f"{lang}-{topic}") for i in ids), (lang, topic)
    assert {r["half"] for r in rows} == {"a", "b"}
