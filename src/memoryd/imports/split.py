"""Strategy detection and splitting of imported text (seed 000 §1.2).

``auto`` picks how a file becomes memories from what it looks like: a
conversation is distilled into atomic facts, a very long text is cut into
overlapping chunks first, a structured document keeps one memory per
section, and a short note becomes one memory. Cuts fall on the strongest
boundary available near the limit (a heading, then a paragraph, then a
line, and only then a hard cut) so a chunk rarely starts mid-thought.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

SMART_SPLIT_MAX_CHARS = 80_000
SMART_SPLIT_OVERLAP = 2_000
# auto: a text with this many role-pattern lines is a conversation
CONVERSATION_MIN_ROLE_LINES = 3
# auto: a text with headings and at least this many words is a structured document
STRUCTURED_MIN_WORDS = 500
# a boundary is looked for in the last part of a chunk only: cutting at the
# first heading of an 80,000-character window would give tiny chunks
BOUNDARY_WINDOW = 0.5

ROLE_LINE = re.compile(
    r"^\s*(user|assistant|human|ai|system|bot|用户|助手)\s*[:：]",
    re.IGNORECASE | re.MULTILINE,
)
HEADING = re.compile(r"^(#{1,2})[ \t]+(\S.*)$", re.MULTILINE)
ANY_HEADING = re.compile(r"^#{1,6}[ \t]+\S", re.MULTILINE)


class Strategy(StrEnum):
    AUTO = "auto"
    ATOMIC = "atomic"
    SECTION = "section"
    DOCUMENT = "document"


@dataclass(frozen=True)
class Section:
    """A ``#`` / ``##`` section: its heading (empty for text before the first) and its text."""

    heading: str
    text: str


def word_count(text: str) -> int:
    """Words, with each CJK character counted as one (Chinese has no spaces)."""
    cjk = len(re.findall(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]", text))
    latin = len(re.findall(r"[^\s\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]+", text))
    return cjk + latin


def is_conversation(text: str) -> bool:
    return len(ROLE_LINE.findall(text)) >= CONVERSATION_MIN_ROLE_LINES


def detect_strategy(text: str) -> Strategy:
    """The seed's auto rules, in its order: conversation, large, structured, short."""
    if is_conversation(text) or len(text) > SMART_SPLIT_MAX_CHARS:
        return Strategy.ATOMIC
    if HEADING.search(text) and word_count(text) >= STRUCTURED_MIN_WORDS:
        return Strategy.SECTION
    return Strategy.DOCUMENT


def _cut(text: str, start: int, end: int) -> int:
    """Where to end a chunk of ``text[start:end]``: the strongest boundary late in it."""
    floor = start + int((end - start) * BOUNDARY_WINDOW)
    window = text[floor:end]
    heading = max(window.rfind("\n## "), window.rfind("\n# "))
    if heading > 0:
        return floor + heading + 1
    for mark in ("\n\n", "\n"):
        at = window.rfind(mark)
        if at > 0:
            return floor + at + len(mark)
    return end


def smart_split(
    text: str, max_chars: int = SMART_SPLIT_MAX_CHARS, overlap: int = SMART_SPLIT_OVERLAP
) -> list[str]:
    """Chunks of at most ``max_chars``, each starting ``overlap`` characters before the last cut."""
    if max_chars <= overlap:
        raise ValueError("max_chars must be larger than overlap")
    if len(text) <= max_chars:
        return [text] if text.strip() else []
    chunks, start = [], 0
    while start < len(text):
        end = min(start + max_chars, len(text))
        if end < len(text):
            end = _cut(text, start, end)
        chunks.append(text[start:end])
        if end >= len(text):
            break
        start = max(end - overlap, start + 1)
    return [c for c in chunks if c.strip()]


def split_sections(text: str) -> list[Section]:
    """One section per ``#`` or ``##`` heading; deeper headings stay inside their section."""
    marks = list(HEADING.finditer(text))
    sections = []
    preamble = text[: marks[0].start()] if marks else text
    if preamble.strip():
        sections.append(Section("", preamble.strip()))
    for i, mark in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(text)
        body = text[mark.start() : end].strip()
        if body:
            sections.append(Section(mark.group(2).strip(), body))
    return sections


def first_sentence(text: str, limit: int) -> str:
    """A rule-based one-line summary: the first sentence (or line) of the text, without markup."""
    for line in text.splitlines():
        line = line.strip().lstrip("#>*-+ ").strip()
        if line:
            match = re.match(r"(.+?(?:[.!?](?=\s|$)|[。！？]))", line)
            sentence = match.group(1) if match else line
            return sentence if len(sentence) <= limit else sentence[: limit - 1].rstrip() + "…"
    return ""
