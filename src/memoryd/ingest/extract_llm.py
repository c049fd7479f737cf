"""Stage 3 with an LLM: one call turns the selected messages into atomic facts.

The answer is validated (:mod:`memoryd.prompts.extraction`); an
:class:`~memoryd.llm.LLMError` (down, timeout, malformed twice) goes to the
caller, which falls back to the rules. The rules still help an LLM fact:
they give it the ``slot`` a later fact of the same slot is compared with
(the preference slot guard), found in the fact's own words or, failing
that, in a rule fact of the same batch whose value the LLM fact names.
"""

from __future__ import annotations

from memoryd.ingest import rules
from memoryd.ingest.reconcile import Fact
from memoryd.llm import LLMClient, LLMError, Message, Usage
from memoryd.prompts import EXTRACTION_SYSTEM, MAX_EXTRACTED_FACTS, ExtractionAnswer

# how sure an LLM fact is on admission (rules say 0.7: a regex match is blunter)
LLM_CONFIDENCE = 0.8
ROLE_NAMES = {"user": "User", "human": "User", "assistant": "Assistant", "ai": "Assistant"}


def transcript(messages: list[tuple[str, str]]) -> str:
    """The conversation as the model reads it: one ``Role: text`` block per message."""
    lines = []
    for role, text in messages:
        name = ROLE_NAMES.get(role.strip().lower(), role.strip().capitalize() or "User")
        lines.append(f"{name}: {text.strip()}")
    return "\n\n".join(lines)


def extraction_messages(messages: list[tuple[str, str]]) -> list[Message]:
    return [
        {"role": "system", "content": EXTRACTION_SYSTEM},
        {"role": "user", "content": "Transcript:\n\n" + transcript(messages)},
    ]


def extract_with_llm(llm: LLMClient, messages: list[tuple[str, str]], usage: Usage) -> list[Fact]:
    """The LLM's facts for ``messages`` (one call, one retry), with rule slots where found.

    Raises :class:`~memoryd.llm.LLMError` when the model gives nothing usable.
    """
    cut_before = usage.truncated
    answer = llm.complete_json(extraction_messages(messages), ExtractionAnswer, usage=usage)
    if not answer.facts and usage.truncated > cut_before:
        # repair keeps complete items only: a cut before the first one is no answer, not "nothing"
        raise LLMError("the extraction answer was cut off before its first complete fact")
    rule_facts = rules.extract_facts(messages)
    facts = []
    for item in answer.facts[:MAX_EXTRACTED_FACTS]:
        fact = Fact(
            content=(item.l2_content or item.l0_abstract).strip(),
            category=item.category,
            l0_abstract=item.l0_abstract.strip(),
            l1_overview=item.l1_overview.strip(),
            l2_content=item.l2_content.strip(),
            tags=[t.strip() for t in item.tags if t.strip()],
            importance=item.importance,
            confidence=LLM_CONFIDENCE,
        )
        annotate_slot(fact, rule_facts)
        facts.append(fact)
    return facts


def annotate_slot(fact: Fact, batch: list[rules.ExtractedFact]) -> None:
    """Give an LLM fact the rules' slot, value and flags, when the rules recognise it.

    First the fact's own words (an LLM that keeps the user's phrasing), then
    a rule fact of the same batch and category whose value the fact names
    ("用户现在更喜欢喝茶" names 茶 of "我现在更喜欢喝茶"). No slot means the
    LLM decides alone, which is the safe default.
    """
    own = rules.extract_facts([("user", text) for text in (fact.l0_abstract, fact.content)])
    text = f"{fact.l0_abstract}\n{fact.content}".casefold()
    named = [
        r
        for r in batch
        if r.slot is not None and r.category is fact.category and r.value.casefold() in text
    ]
    match = next((r for r in own if r.slot is not None), None) or next(iter(named), None)
    if match is None:
        return
    fact.slot, fact.value = match.slot, match.value
    fact.negative, fact.change, fact.exclusive = match.negative, match.change, match.exclusive
