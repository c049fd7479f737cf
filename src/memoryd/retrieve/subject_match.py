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

A question about one of the user's attributes ("where does the user live")
is answered by the user's own statement of it: a memory read as about that
attribute (``about:residence``), the user's, as a fact (none of the marks
above, nor a liking beside others or a mention), is multiplied by ``config.attribute_boost``
(:func:`asked_attribute`), unless the question asks about the past or about
plans, which reach beyond the current value.
Near the question in words only, a trip to Lisbon, a note naming another
firm or a question the user asked would otherwise outrank the fact itself.
What is no longer current is not searched at all, so the boost goes to the
current value.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from memoryd.models import ABOUT_PREFIX, NOT_A_VALUE_MARKS, OTHER_MARK, PAST_MARK, PLAN_MARK
from memoryd.retrieve.candidate import Candidate
from memoryd.retrieve.config import SearchConfig
from memoryd.text.statements import asks_about_past, asks_about_plans, names_the_other


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


def asked_attribute(
    candidates: list[Candidate],
    query: str,
    config: SearchConfig,
    asked: Callable[[], Sequence[str]],
) -> list[Candidate]:
    """The user's own statements of the attribute the query asks about, first.

    Only a statement that holds a value counts: not another person's, a plan, a
    past, a liking beside others or a mention (``NOT_A_VALUE_MARKS``). Applied
    with the subjects, before the floor of stage 4, so what is near the question
    in words only falls under it. ``asked`` reads the query's attributes, only
    once a candidate is marked as about one (raw turns and imports are not).
    """
    # a question about what held once or what may come asks beyond the current value
    if config.attribute_boost == 1.0 or asks_about_past(query) or asks_about_plans(query):
        return candidates
    stated: set[str] | None = None
    for c in candidates:
        marks = c.mem.marks
        about = {m[len(ABOUT_PREFIX) :] for m in marks if m.startswith(ABOUT_PREFIX)}
        if not about or NOT_A_VALUE_MARKS & set(marks):
            continue
        if stated is None:
            stated = set(asked())
        if about & stated:
            c.score *= config.attribute_boost
    return candidates
