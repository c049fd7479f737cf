"""Stage 1 of the slow path: which messages of a conversation go to extraction.

The most recent ones, newest first, until ``MESSAGE_BUDGET`` messages or
``BYTE_BUDGET`` bytes of UTF-8 (seed 000 §1.1): what was said last is what
the capture is about, and the budget bounds one extraction call.
"""

from __future__ import annotations

from collections.abc import Sequence

MESSAGE_BUDGET = 20
BYTE_BUDGET = 200_000


def _utf8_prefix(text: str, limit: int) -> str:
    """The longest start of ``text`` whose UTF-8 form fits in ``limit`` bytes."""
    return text.encode("utf-8")[:limit].decode("utf-8", errors="ignore")


def select_messages(
    messages: Sequence[tuple[str, str]],
    max_messages: int = MESSAGE_BUDGET,
    max_bytes: int = BYTE_BUDGET,
) -> list[tuple[str, str]]:
    """(role, content) pairs to extract from, oldest first, within both budgets.

    A newest message that alone is over the byte budget is cut to it rather
    than dropped: the latest turn is the one a capture must not lose.
    """
    chosen: list[tuple[str, str]] = []
    used = 0
    for role, content in reversed(messages):
        if len(chosen) >= max_messages:
            break
        size = len(content.encode("utf-8"))
        if used + size > max_bytes:
            if not chosen:
                chosen.append((role, _utf8_prefix(content, max_bytes)))
            break
        chosen.append((role, content))
        used += size
    chosen.reverse()
    return chosen
