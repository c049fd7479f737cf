"""What never reaches the disk or an LLM: ``<private>`` blocks, and recalled context.

Applied on every capture path before anything is stored (conversation turns,
direct memories, imports, the hooks' own facts), and again when memories are
injected. A message that holds nothing else is dropped whole.

* ``<private>…</private>`` is replaced by ``[REDACTED]``.
* A recall block (memoryd's own fence, ourmem's ``<omem-context>``, and the
  blocks other memory tools inject) is removed. Agents send their prompts
  back with the block still in them; stored as a turn, the block would be
  found again by the next search, ranked first by its many shared words, and
  bring back what the user has since changed or deleted.
"""

from __future__ import annotations

import re

PRIVATE_BLOCK = re.compile(r"<private\b[^>]*>.*?(?:</private\s*>|$)", re.IGNORECASE | re.DOTALL)
REDACTED = "[REDACTED]"

# the fence around the context memoryd injects (memoryd.inject renders it)
MEMORYD_FENCE_TAG = "memoryd-context"
# blocks of recalled memories that memory tools put into prompts: memoryd's; ourmem's
# plugins (context and profile); OpenClaw's memory plugins and mem0-style hooks; supermemory
RECALL_TAGS = (
    MEMORYD_FENCE_TAG,
    "omem-context",
    "omem-profile",
    "relevant-memories",
    "supermemory-context",
    "memory-context",
    "recalled-memories",
)
_TAGS = "|".join(re.escape(t) for t in RECALL_TAGS)
# an unclosed block runs to the end: a client that clips long messages cuts its close tag
RECALL_BLOCK = re.compile(rf"<({_TAGS})\b[^>]*>.*?(?:</\1\s*>|$)\s*", re.IGNORECASE | re.DOTALL)
_RECALL_OPEN = re.compile(rf"<(?:{_TAGS})\b", re.IGNORECASE)


def strip_recall(text: str) -> str:
    """The text without the recall blocks in it."""
    if _RECALL_OPEN.search(text) is None:
        return text
    return RECALL_BLOCK.sub("", text)


def redact(text: str) -> str | None:
    """The text without recall blocks, private blocks replaced; None when nothing is left."""
    text = strip_recall(text)
    if "<private" not in text.lower():
        return text if text.strip() else None
    cleaned = PRIVATE_BLOCK.sub(REDACTED, text)
    if not cleaned.replace(REDACTED, "").strip():
        return None
    return cleaned
