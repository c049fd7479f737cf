"""Noticing "remember this" in a prompt (seed 000 §3.2 keywords, English and Chinese).

The keywords alone are loose ("note that the tests are slow", "do you
remember…?", "保存文件"), and a stored prompt is a pinned memory that is
recalled for good, so what is kept is narrow: only the sentences that carry
a keyword, never a question, and only when there is something left to
remember besides the request itself. "Remember this" with nothing after it
points at earlier context the hook cannot see; the agent is asked to store
that itself instead.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

KEYWORDS_EN = (
    "remember",
    "save this",
    "don't forget",
    "keep in mind",
    "note that",
    "store this",
    "memorize",
)
KEYWORDS_ZH = ("记住", "记一下", "保存", "记下来", "别忘了")

# word-bounded English (with the spellings people type), substring Chinese (no word breaks)
_EN = re.compile(
    r"\b(?:remember|save this|store this|keep in mind|note that|memori[sz]e"
    r"|(?:don['’]?t|do not) forget)\b",
    re.IGNORECASE,
)
_ZH = re.compile("|".join(map(re.escape, KEYWORDS_ZH)))
# a sentence ends at . ! ? before a space (not inside "3.11" or "e.g."), or at CJK stops
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])|\n+")
_QUESTION = re.compile(r"(?:[?？]|吗|呢)\s*$")
# what a bare request is made of: the keyword plus filler, no fact
_FILLER = re.compile(
    r"\b(?:please|pls|can you|could you|to|this|that|it|these|those|for me|for later|"
    r"always|and|also|the|following|now|ok|okay)\b|请|帮我|一下|这个|这些|这|那个|下来|好吗",
    re.IGNORECASE,
)
MIN_FACT_WORDS = 2
MIN_FACT_CJK = 3
MAX_REMEMBER_CHARS = 2000
KEY_PREFIX = "claude-code:remember:"


@dataclass(frozen=True)
class RememberRequest:
    """Sentences to store, and whether the user asked without saying what."""

    facts: list[str] = field(default_factory=list)
    bare: bool = False


def has_keyword(text: str) -> bool:
    return bool(_EN.search(text) or _ZH.search(text))


def _substance(sentence: str) -> bool:
    rest = _FILLER.sub(" ", _ZH.sub(" ", _EN.sub(" ", sentence)))
    words = re.findall(r"[A-Za-z0-9_][\w'.-]*", rest)
    cjk = re.findall(r"[\u3400-\u9fff]", rest)
    return len(words) >= MIN_FACT_WORDS or len(cjk) >= MIN_FACT_CJK


def remember_request(prompt: str) -> RememberRequest | None:
    """The "remember" part of a prompt, or None when it asks for nothing to be kept."""
    if not has_keyword(prompt):
        return None
    facts: list[str] = []
    bare = False
    for part in _SENTENCE_END.split(prompt):
        sentence = part.strip()
        if not sentence or not has_keyword(sentence) or _QUESTION.search(sentence):
            continue
        if _substance(sentence):
            facts.append(sentence[:MAX_REMEMBER_CHARS])
        else:
            bare = True
    if not facts and not bare:
        return None
    return RememberRequest(facts, bare and not facts)


def rest_of_prompt(prompt: str) -> str:
    """The prompt without the sentences that ask to remember: what the user asks about now.

    A question that mentions a keyword ("do you remember…?") is a question and stays.
    """
    kept = [
        sentence
        for sentence in (part.strip() for part in _SENTENCE_END.split(prompt))
        if sentence and (not has_keyword(sentence) or _QUESTION.search(sentence))
    ]
    return " ".join(kept)


def memory_key(fact: str) -> str:
    """One slot per fact, so submitting the same prompt twice keeps one memory."""
    normal = " ".join(fact.casefold().split())
    return KEY_PREFIX + hashlib.sha256(normal.encode("utf-8")).hexdigest()[:24]
