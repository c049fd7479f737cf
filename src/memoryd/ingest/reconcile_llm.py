"""Stage 6 with an LLM: one call decides, for a batch of facts, what each does.

The prompt numbers existing memories ``[0]``, ``[1]``, … (seed 000 §1.4):
UUIDs never reach the model. The answer's integers are mapped back here;
an integer that names no memory shown makes that fact a CREATE (better a
near-duplicate than a change to the wrong memory), and a fact the model
left out gets no verdict, so the caller decides it by rules. ``enforce``
is not applied here: the caller applies it to every decision, whoever made it.
"""

from __future__ import annotations

from dataclasses import dataclass

from memoryd.ingest.reconcile import MAX_EXISTING, Candidate, Decision, Fact
from memoryd.llm import LLMClient, Message, Usage
from memoryd.models import Memory, MemoryType
from memoryd.prompts import RECONCILE_SYSTEM, ReconcileAnswer

# an existing memory as shown to the model; longer contents are cut
MAX_MEMORY_CHARS = 500


@dataclass
class Verdict:
    """A decision for one fact, with what MERGE and CONTEXTUALIZE need to execute."""

    decision: Decision
    target: Memory | None = None
    merged_content: str | None = None
    context_label: str | None = None


def number_memories(candidates: list[list[Candidate]]) -> list[Memory]:
    """The existing memories of all facts, each once, in first-found order, at most 60."""
    seen: dict[str, Memory] = {}
    for found in candidates:
        for c in found:
            seen.setdefault(c.memory.id, c.memory)
    return list(seen.values())[:MAX_EXISTING]


def _shown(memory: Memory) -> str:
    text = " ".join((memory.content or memory.l0_abstract).split())
    if len(text) > MAX_MEMORY_CHARS:
        text = text[:MAX_MEMORY_CHARS] + "…"
    pinned = ", pinned" if memory.memory_type is MemoryType.PINNED else ""
    return f"({memory.category.value}{pinned}) {text}"


def reconcile_messages(
    facts: list[Fact], candidates: list[list[Candidate]], memories: list[Memory]
) -> list[Message]:
    """The prompt: memories by number, then each fact with the numbers found for it."""
    number = {m.id: i for i, m in enumerate(memories)}
    shown = [f"[{i}] {_shown(m)}" for i, m in enumerate(memories)]
    lines = []
    for i, (fact, found) in enumerate(zip(facts, candidates, strict=True)):
        related = [f"[{number[c.memory.id]}]" for c in found if c.memory.id in number]
        near = ", ".join(related) or "none"
        lines.append(f"F{i} ({fact.category.value}) {fact.content}\n   similar memories: {near}")
    body = (
        "EXISTING MEMORIES:\n"
        + ("\n".join(shown) or "(none)")
        + "\n\nNEW FACTS:\n"
        + "\n".join(lines)
    )
    return [{"role": "system", "content": RECONCILE_SYSTEM}, {"role": "user", "content": body}]


def reconcile_with_llm(
    llm: LLMClient, facts: list[Fact], candidates: list[list[Candidate]], usage: Usage
) -> list[Verdict | None]:
    """One verdict per fact (``None`` where the model gave none), in the facts' order.

    Raises :class:`~memoryd.llm.LLMError` when the model gives nothing usable.
    """
    memories = number_memories(candidates)
    prompt = reconcile_messages(facts, candidates, memories)
    answer = llm.complete_json(prompt, ReconcileAnswer, usage=usage)
    verdicts: list[Verdict | None] = [None] * len(facts)
    for item in answer.decisions:
        if not 0 <= item.fact_index < len(facts) or verdicts[item.fact_index] is not None:
            continue  # an unknown fact, or a second answer for one: the first one holds
        decision = Decision(item.decision)
        target = None
        if item.target is not None:
            if 0 <= item.target < len(memories):
                target = memories[item.target]
            else:
                decision = Decision.CREATE  # a number the model made up changes nothing
        verdicts[item.fact_index] = Verdict(
            decision,
            target,
            merged_content=(item.merged_content or "").strip() or None,
            context_label=(item.context_label or "").strip() or None,
        )
    return verdicts
