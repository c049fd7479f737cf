"""Find the JSON in a model's answer, and mend the ways local models break it.

Hosted models honour ``response_format`` and answer with clean JSON; local
ones (Ollama, LM Studio, llama.cpp, small vLLM models) often do not: they
wrap the object in prose or a Markdown fence, think aloud in ``<think>``
blocks first, leave trailing commas, write Python literals, or stop mid-way
when they hit their token limit. Each of those would otherwise cost a retry
or a lost extraction batch, so :func:`extract_json` tries, in order:

1. the whole answer (without its reasoning) as strict JSON;
2. each fenced block, then the whole answer: from each ``{`` / ``[``, the
   value read strictly, else by the lenient reader of
   :mod:`memoryd.llm.lenient_json`, keeping the longest.

Everything here is a pure function over strings.
"""

from __future__ import annotations

import json
import re
from typing import Any

from memoryd.llm.lenient_json import MalformedJSON, parse_lenient

# Start positions tried per answer: enough for prose that mentions brackets,
# few enough that a pathological answer cannot make extraction quadratic.
MAX_START_CANDIDATES = 32
THINK_BLOCK = re.compile(r"<think>.*?</think>", re.IGNORECASE | re.DOTALL)
THINK_CLOSE = re.compile(r"</think>", re.IGNORECASE)
THINK_OPEN = re.compile(r"<think>", re.IGNORECASE)
# A fence may be left open when the answer was cut off: then it runs to the end.
FENCE = re.compile(r"```[\w+-]*[ \t]*\n?(.*?)(?:```|\Z)", re.DOTALL)


def extract_json(text: str) -> Any:
    """The JSON object or array in ``text``, mended where needed.

    Raises ``ValueError`` saying why when there is none: an empty answer, a
    refusal in prose, or JSON too broken to mend.
    """
    body = strip_thinking(text).strip()
    if not body:
        if THINK_OPEN.search(text):
            raise ValueError("the answer holds only reasoning in a <think> block, no JSON")
        raise ValueError("the answer is empty")
    whole = _strict_whole(body)
    if whole is not None:
        return whole[0]
    first_error: MalformedJSON | None = None
    for region in [m.group(1) for m in FENCE.finditer(body) if m.group(1).strip()] + [body]:
        found, error = _longest_value(region)
        if found is not None:
            return found[0]
        first_error = first_error or error
    if first_error is not None:
        raise ValueError(f"the answer's JSON is malformed beyond repair: {first_error}")
    raise ValueError("no JSON object or array in the answer")


def strip_thinking(text: str) -> str:
    """``text`` without the reasoning a thinking model wrote before its answer.

    Closed ``<think>`` blocks go; a lone ``</think>`` (the opening tag was in
    the chat template) ends the reasoning; an unclosed ``<think>`` means the
    answer never started, so everything from it on goes.
    """
    text = THINK_BLOCK.sub("", text)
    closes = list(THINK_CLOSE.finditer(text))
    if closes:
        text = text[closes[-1].end() :]
    opened = THINK_OPEN.search(text)
    if opened:
        text = text[: opened.start()]
    return text


def _strict_whole(body: str) -> tuple[Any] | None:
    """The body as strict JSON, if it is a container (or a string holding one)."""
    try:
        value = json.loads(body, strict=False)
    except (ValueError, RecursionError):
        return None
    if isinstance(value, str) and value.strip()[:1] in ("{", "["):
        return _strict_whole(value.strip())  # JSON sent as a JSON string
    return (value,) if isinstance(value, dict | list) else None


def _longest_value(region: str) -> tuple[tuple[Any] | None, MalformedJSON | None]:
    """The longest container read from some bracket of ``region``, and the first error.

    Each bracket is read strictly, then leniently. A bracket inside a value
    already read is skipped, and so is one before the point where an
    enclosing value broke: a fragment of a broken answer (its inner list)
    must not pass for the answer.
    """
    decoder = json.JSONDecoder(strict=False)
    best: tuple[int, Any] | None = None
    first_error: MalformedJSON | None = None
    skip_to = -1
    starts = [i for i, ch in enumerate(region) if ch in "{["][:MAX_START_CANDIDATES]
    for start in starts:
        if start < skip_to:
            continue
        try:
            value, end = decoder.raw_decode(region, start)
        except (ValueError, RecursionError):
            try:
                value, end = parse_lenient(region, start)
            except MalformedJSON as exc:
                first_error = first_error or exc
                skip_to = max(skip_to, exc.pos)
                continue
        skip_to = max(skip_to, end)
        if best is None or end - start > best[0]:
            best = (end - start, value)
    return (None if best is None else (best[1],)), first_error
