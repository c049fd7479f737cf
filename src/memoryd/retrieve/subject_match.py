"""After fusion, beside speaker_match: a question about the user ranks the user's own facts
above another person's and above plans.

Smart ingest and direct adds mark a statement whose subject is another
person (``about:other``: "my sister Anna lives in Boston") and one that is a
plan or wish (``about:plan``: "thinking about moving to Seattle"). Both are
kept and searchable, but neither answers "where does the user live": near
the query in words and meaning, they would otherwise outrank the user's own
fact. Such a memory is multiplied by ``config.other_subject_boost`` or
``config.plan_boost`` unless the query names that person (a relation word
or a name the statement holds) or asks about plans. What held once, told as
over (``about:past``: "I used to live in Paris", or "no longer vegetarian"
said beside the new diet) is multiplied by ``config.past_boost`` unless the
query asks about the past. Memories without these
marks (raw imports, benchmarks ingested raw) are unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence

from memoryd.models import OTHER_MARK, PAST_MARK, PLAN_MARK
from memoryd.retrieve.candidate import Candidate
from memoryd.retrieve.config import SearchConfig
from memoryd.statements import asks_about_past, asks_about_plans, names_the_other


def set_aside(marks: Sequence[str], content: str, query: str) -> str | None:
    """Why a memory is no answer to ``query`` by itself: ``"other"`` (another person's
    fact, the query naming neither them nor their relation), ``"plan"`` (the query not
    asking about plans) or ``"past"`` (the query not asking about the past); None when it
    may be. The proxy's recall asks the same (proxy/recall.py)."""
    if OTHER_MARK in marks and not names_the_other(query, content):
        return "other"
    if PLAN_MARK in marks and not asks_about_plans(query):
        return "plan"
    if PAST_MARK in marks and not asks_about_past(query):
        return "past"
    return None


def subject_match(candidates: list[Candidate], query: str, config: SearchConfig) -> list[Candidate]:
    if config.other_subject_boost == config.plan_boost == config.past_boost == 1.0:
        return candidates
    boosts = {
        "other": config.other_subject_boost,
        "plan": config.plan_boost,
        "past": config.past_boost,
    }
    for c in candidates:
        why = set_aside(c.mem.marks, c.mem.content, query)
        if why is not None:
            c.score *= boosts[why]
    return candidates
