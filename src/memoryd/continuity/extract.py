"""Extractive condensing of a session, the offline path of ``continuity.layers``.

D5 is one line per exchange (a user message, the assistant's words and the
tools after it); the outline keeps the first request, the exchanges richest
in the session's own words (greedily, each adding words not covered yet)
and the outcome; the gist is goal and outcome in one line; the themes are
the terms the session used most. Deterministic: the same source gives the
same text, which is what makes a resumed consolidation find its own work.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from memoryd.continuity.mechanical import cut
from memoryd.inject import estimate_tokens

# ~tokens of each layer (seed 004)
D5_TOKENS, D2_TOKENS, D1_TOKENS = 3000, 500, 200
EXCHANGE_CHARS = 200  # one side of an exchange in D5
STEP_CHARS = 150  # one side of an exchange in the outline
MAX_THEMES = 8
_WORD = re.compile(r"[^\W\d_][\w.-]*[^\W_]|[^\W\d_]{3,}", re.UNICODE)
_STOP = (
    "the and for that this with you your are was were have has had not but can could "
    "would should will shall what when where which who why how all any some into onto from "
    "than then them they their there these those our out its it's i'm i've let let's just "
    "also use used using now new get got make made done do does did been being about after "
    "before again more most very much many such only own same so too each other over under "
    "here please thanks thank yes okay sure want need like see look file files run ran"
)
STOPWORDS = frozenset(_STOP.split())
# an outline line's own label ("Goal:", "Steps:", "Outcome:", "Next:"), the template's
# words rather than the session's: themes leave it out
_LABEL = re.compile(r"^\s*[A-Z][a-z]+(?: [a-z]+)?:(?:\s|$)")


@dataclass(frozen=True)
class Exchange:
    user: str
    assistant: str
    tools: tuple[str, ...] = ()


def exchanges(rows: Sequence[Mapping[str, Any]]) -> list[Exchange]:
    """D6 rows as exchanges: a user message, the assistant's words and tools after it."""
    found: list[Exchange] = []
    user, said, tools = "", [], []  # type: ignore[var-annotated]
    for row in [*rows, {"role": "user", "content": ""}]:
        role, content = row["role"], str(row["content"])
        if role == "user":
            if user or said:
                found.append(Exchange(user, " ".join(said), tuple(dict.fromkeys(tools))))
            user, said, tools = content, [], []
        elif role == "assistant":
            said.append(content)
        elif role == "tool":
            tools.append(content.split("(", 1)[0])
    return found


def _line(e: Exchange, chars: int) -> str:
    flat = " ".join(e.user.split())
    answer = " ".join(e.assistant.split())
    line = f"- User: {cut(flat, chars)}" if flat else "- (no request)"
    if answer:
        line += f" → Assistant: {cut(answer, chars)}"
    if e.tools:
        line += f" [tools: {', '.join(e.tools)}]"
    return line


def build_exchanges(found: Sequence[Exchange], gap: bool = False) -> str:
    """D5: one line per exchange, the first and the newest ones kept within ~3,000 tokens.

    ``gap``: exchanges between the first and those given were not read at all.
    """
    lines = [_line(e, EXCHANGE_CHARS) for e in found]
    if not lines:
        return ""
    kept: list[str] = []
    budget = D5_TOKENS - estimate_tokens(lines[0]) - 10
    for line in reversed(lines[1:]):
        cost = estimate_tokens(line) + 1
        if cost > budget:
            break
        kept.insert(0, line)
        budget -= cost
    skipped = len(lines) - 1 - len(kept)
    if gap:
        note = ["- … earlier exchanges left out"]
    else:
        note = [f"- … {skipped} earlier exchange(s) left out"] if skipped else []
    return "\n".join([lines[0], *note, *kept])


def keywords(text: str) -> Counter[str]:
    return Counter(
        w.casefold() for w in _WORD.findall(text) if w.casefold() not in STOPWORDS and len(w) > 2
    )


def _parse(d5: str) -> list[tuple[str, str]]:
    """D5 lines back as (request, answer) pairs."""
    pairs = []
    for line in d5.splitlines():
        if not line.startswith("- User: "):
            continue
        body = line[len("- User: ") :]
        user, _, answer = body.partition(" → Assistant: ")
        pairs.append((user, answer.split(" [tools: ", 1)[0]))
    return pairs


def extract_outline(d5: str, header: str) -> str:
    """D2 offline: the goal, the exchanges richest in the session's own words, the outcome."""
    pairs = _parse(d5)
    if not pairs:
        return f"{header}\n{cut(' '.join(d5.split()), 1500)}"
    freq = keywords(d5)
    goal, outcome = pairs[0][0], pairs[-1][1] or pairs[-1][0]
    head = [header, f"Goal: {cut(goal, 300)}", "Steps:"]
    tail = [f"Outcome: {cut(outcome, 300)}"]
    budget = D2_TOKENS - estimate_tokens("\n".join(head + tail))

    def score(pair: tuple[str, str]) -> float:
        words = keywords(" ".join(pair))
        return sum(freq[w] for w in words) / math.sqrt(1 + sum(words.values()))

    # greedy: the richest exchange, then the richest in words not covered yet
    chosen: set[int] = set()
    left = set(range(1, len(pairs)))
    while left:
        best = min(left, key=lambda j: (-score(pairs[j]), j))
        left.discard(best)
        user, answer = pairs[best]
        step = f"- {cut(user, STEP_CHARS)}" + (f" → {cut(answer, STEP_CHARS)}" if answer else "")
        cost = estimate_tokens(step) + 1
        if cost > budget:
            continue
        chosen.add(best)
        budget -= cost
        for word in keywords(" ".join(pairs[best])):
            freq[word] = 0  # covered
    steps = []
    for i in sorted(chosen):
        user, answer = pairs[i]
        steps.append(
            f"- {cut(user, STEP_CHARS)}" + (f" → {cut(answer, STEP_CHARS)}" if answer else "")
        )
    return "\n".join(head + steps + tail)


def extract_gist(d2: str, header: str) -> str:
    """D1 offline: what the session set out to do, and how it ended, in one line."""
    fields = dict(
        line.split(": ", 1) for line in d2.splitlines() if line.startswith(("Goal: ", "Outcome: "))
    )
    goal = fields.get("Goal", "")
    outcome = fields.get("Outcome", "")
    text = f"{header} {cut(goal, 400)}" + (f" Outcome: {cut(outcome, 300)}" if outcome else "")
    return cut(text, D1_TOKENS * 4)


def extract_themes(d2: str, header: str) -> str:
    """D0 offline: the terms the session used most."""
    body = "\n".join(_LABEL.sub("", line, count=1) for line in d2.splitlines()[1:])
    terms = [w for w, _ in keywords(body).most_common(MAX_THEMES)]
    return f"{header} {', '.join(terms)}"
