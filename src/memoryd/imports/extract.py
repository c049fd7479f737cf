"""Facts from imported text: per chunk (atomic), per section, per document.

With an LLM, a chunk yields atomic facts and a section or document one
summarised memory; a failed summary is tried twice more with exponential
backoff (seed 000 §1.2: 1 s, 2 s). Without one, or when every try failed,
a section or document still becomes a memory: its text as content and a
rule-based index line (the heading, else the first sentence), so an
import is useful offline and an LLM outage costs summaries, never data.
"""

from __future__ import annotations

import time

from memoryd.imports.split import first_sentence
from memoryd.ingest.reconcile import Fact
from memoryd.llm import LLMClient, LLMError, Message, Usage
from memoryd.models import MAX_L0_CHARS, MAX_L1_CHARS, Category
from memoryd.prompts import (
    CHUNK_FACTS_SYSTEM,
    MAX_EXTRACTED_FACTS,
    ExtractionAnswer,
    SummaryAnswer,
)

SUMMARY_RETRIES = 2
BACKOFF_S = 1.0  # doubled after each failed try: 1 s, then 2 s
# how sure a summary is: an LLM read the text; a rule only copied its first line
LLM_SUMMARY_CONFIDENCE = 0.8
RULE_SUMMARY_CONFIDENCE = 0.7
IMPORT_IMPORTANCE = 0.5
# what one summary prompt may carry; a longer text is summarised from its start
MAX_PROMPT_CHARS = 80_000


def rule_fact(text: str, heading: str = "", category: Category = Category.ENTITIES) -> Fact:
    """A section or document as a memory without an LLM: heading or first sentence as index,
    filed under ``category`` (:class:`memoryd.imports.category.CategoryGuess`)."""
    rest = text.partition("\n")[2]
    body_line = first_sentence(rest if heading and rest.strip() else text, MAX_L1_CHARS)
    return Fact(
        content=text,
        category=category,
        l0_abstract=(heading or first_sentence(text, MAX_L0_CHARS))[:MAX_L0_CHARS],
        l1_overview=body_line,
        importance=IMPORT_IMPORTANCE,
        confidence=RULE_SUMMARY_CONFIDENCE,
    )


def summary_fact(
    llm: LLMClient,
    system: str,
    text: str,
    usage: Usage,
    sleep: float = BACKOFF_S,
) -> Fact:
    """One memory for ``text`` summarised by the model; LLMError after every retry failed."""
    messages: list[Message] = [
        {"role": "system", "content": system},
        {"role": "user", "content": text[:MAX_PROMPT_CHARS]},
    ]
    error: LLMError | None = None
    for attempt in range(SUMMARY_RETRIES + 1):
        if attempt:
            time.sleep(sleep * 2 ** (attempt - 1))
        try:
            answer = llm.complete_json(messages, SummaryAnswer, usage=usage)
        except LLMError as exc:
            error = exc
            continue
        return Fact(
            content=text,
            category=answer.category,
            l0_abstract=answer.l0_abstract.strip()[:MAX_L0_CHARS],
            l1_overview=answer.l1_overview.strip()[:MAX_L1_CHARS],
            tags=[t.strip() for t in answer.tags if t.strip()],
            importance=answer.importance,
            confidence=LLM_SUMMARY_CONFIDENCE,
        )
    assert error is not None
    raise error


def chunk_facts(llm: LLMClient, chunk: str, usage: Usage) -> list[Fact]:
    """Atomic facts of one chunk of a long document (one call, one JSON retry)."""
    messages: list[Message] = [
        {"role": "system", "content": CHUNK_FACTS_SYSTEM},
        {"role": "user", "content": chunk},
    ]
    answer = llm.complete_json(messages, ExtractionAnswer, usage=usage)
    return [
        Fact(
            content=(item.l2_content or item.l0_abstract).strip(),
            category=item.category,
            l0_abstract=item.l0_abstract.strip()[:MAX_L0_CHARS],
            l1_overview=item.l1_overview.strip()[:MAX_L1_CHARS],
            l2_content=item.l2_content.strip(),
            tags=[t.strip() for t in item.tags if t.strip()],
            importance=item.importance,
            confidence=LLM_SUMMARY_CONFIDENCE,
        )
        for item in answer.facts[:MAX_EXTRACTED_FACTS]
    ]
