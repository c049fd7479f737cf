"""Summaries into long-term memory: each line as the turn it stands for.

A summary line ``Caroline: I moved to Berlin`` is given to smart ingest as
Caroline saying it, dated by the ``[Date: …]`` line above it, so the rules
(and the LLM) that distil user turns see the decision or preference as the
person stated it.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from memoryd.context.store import NewSummary

_SPEAKER_LINE = re.compile(r"^([^:\n]{1,60}): (.+)$")


def summary_turns(summary: NewSummary) -> list[dict[str, Any]]:
    """A summary's lines as the turns they stand for: ``Caroline: …`` said by Caroline."""
    turns = []
    day: str | None = None
    for line in summary.content.splitlines():
        line = line.strip()
        if line.startswith("[Date: ") and line.endswith("]"):
            day = line[len("[Date: ") : -1]
            continue
        if not line:
            continue
        match = _SPEAKER_LINE.match(line)
        role, text = (match.group(1), match.group(2)) if match else ("summary", line)
        turn: dict[str, Any] = {"role": role, "content": text}
        when = _day(day)
        if when is not None:
            turn["created_at"] = when
        turns.append(turn)
    return turns


def _day(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        return datetime.strptime(text, "%d %B %Y").replace(tzinfo=UTC)
    except ValueError:
        return None
