"""After fusion: a query that names a date ranks what was said on that date first.

"Which recipe did Ana share on March 4, 2024?" is about a day; the turns of
that day carry the date only in their header (``[2024-03-04 Mon 18:02]
Ana``), which the keyword leg cannot match with "March" and the vector leg
does not see. This stage reads the dates a query names and
multiplies each candidate that happened then (its ``valid_from``, else when
it was stored) by ``config.date_boost``.

A date is a month name (or its usual abbreviation), with a day and a year
when given ("October 13, 2023", "13 October", "1 February, 2023", "June",
"May 2023"), or an ISO date ("2023-10-13"). It matches at the precision it
was written: a month alone matches that month of any year. "may" in lower
case without a day or year is the verb, not the month.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from memoryd.retrieve.candidate import Candidate
from memoryd.retrieve.config import SearchConfig

_MONTH_NAMES = (
    ("january", "jan"),
    ("february", "feb"),
    ("march", "mar"),
    ("april", "apr"),
    ("may",),
    ("june", "jun"),
    ("july", "jul"),
    ("august", "aug"),
    ("september", "sept", "sep"),
    ("october", "oct"),
    ("november", "nov"),
    ("december", "dec"),
)
MONTHS = {name: number for number, names in enumerate(_MONTH_NAMES, 1) for name in names}
_MONTH = "|".join(sorted(MONTHS, key=len, reverse=True))
_ISO = re.compile(r"\b((?:19|20)\d\d)-([01]\d)-([0-3]\d)\b")
_WRITTEN = re.compile(
    r"\b(?:(?P<day_before>[0-3]?\d)(?:st|nd|rd|th)?\s+(?:of\s+)?)?"
    rf"(?P<month>{_MONTH})\.?"
    r"(?:\s+(?P<day_after>[0-3]?\d)(?:st|nd|rd|th)?\b)?"
    r"(?:,?\s+(?P<year>(?:19|20)\d\d))?\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class DateRef:
    """A date as a query names it: the month always, the year and the day if given."""

    month: int
    year: int | None = None
    day: int | None = None

    def covers(self, when: datetime) -> bool:
        return (
            when.month == self.month
            and (self.year is None or when.year == self.year)
            and (self.day is None or when.day == self.day)
        )


def dates_in(query: str) -> list[DateRef]:
    """The dates a query names, in the order written."""
    found = [DateRef(int(m[2]), int(m[1]), int(m[3])) for m in _ISO.finditer(query)]
    for m in _WRITTEN.finditer(query):
        word = m["month"]
        day = m["day_before"] or m["day_after"]
        if word.lower() == "may" and word[0].islower() and not (day or m["year"]):
            continue
        day_of_month = int(day) if day and 1 <= int(day) <= 31 else None
        year = int(m["year"]) if m["year"] else None
        found.append(DateRef(MONTHS[word.lower()], year, day_of_month))
    return found


def date_match(candidates: list[Candidate], query: str, config: SearchConfig) -> list[Candidate]:
    if config.date_boost == 1.0 or not candidates:
        return candidates
    refs = dates_in(query)
    if not refs:
        return candidates
    for c in candidates:
        when = c.mem.said_at
        if any(ref.covers(when) for ref in refs):
            c.score *= config.date_boost
    return candidates
