"""Whether a decoded JSON value is one memoryd can take: nesting, and text a store can hold.

Read at the edge for every request body (:mod:`memoryd.web.json_body`)
and wherever JSON arrives inside text (a transcript to bootstrap from):
nesting past :data:`MAX_DEPTH` would overflow a recursive walk further in,
and a lone surrogate (``"\\ud800"``: valid JSON, not UTF-8) fails the first
write. Both are the sender's mistake: a 400 with what was wrong.
"""

from __future__ import annotations

from typing import Any

# deeper than any message, tool call or setting memoryd takes (tool arguments included)
MAX_DEPTH = 64
TOO_DEEP = f"nested deeper than {MAX_DEPTH} levels"
NOT_TEXT = "not valid Unicode text"


def problem(value: Any) -> str | None:
    """What is wrong with ``value``, or None; iterative, so any depth is safe to read."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list) and depth > MAX_DEPTH:
            return TOO_DEEP
        if isinstance(item, dict):
            for key, child in item.items():
                if isinstance(key, str) and not encodable(key):
                    return f"a key is not valid Unicode text: {key[:40]!a}"
                stack.append((child, depth + 1))
        elif isinstance(item, list):
            stack.extend((child, depth + 1) for child in item)
        elif isinstance(item, str) and not encodable(item):
            return f"a string is {NOT_TEXT} (a lone surrogate such as \\ud800): {item[:40]!a}"
    return None


def encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
