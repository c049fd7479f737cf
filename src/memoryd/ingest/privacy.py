"""Privacy filter: ``<private>…</private>`` never reaches the disk or an LLM.

Applied on every capture path before anything is stored. A message that is
private from end to end is dropped whole.
"""

from __future__ import annotations

import re

PRIVATE_BLOCK = re.compile(r"<private\b[^>]*>.*?(?:</private\s*>|$)", re.IGNORECASE | re.DOTALL)
REDACTED = "[REDACTED]"


def redact(text: str) -> str | None:
    """The text with private blocks replaced, or None when nothing public is left."""
    if "<private" not in text.lower():
        return text
    cleaned = PRIVATE_BLOCK.sub(REDACTED, text)
    if not cleaned.replace(REDACTED, "").strip():
        return None
    return cleaned
