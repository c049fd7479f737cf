"""Assembly: the messages to send for one turn, within a token budget.

In order: the system addition (the hint to use ``lcm_grep`` / ``lcm_expand_query``
when compressed history exists), the recall sections, the summaries and any
messages not yet compacted, oldest first, and the fresh tail verbatim. The
fresh tail and the hint always go in (a budget too small for them is a
``validation_error``); recall takes at most half of what is left; the history
before the tail goes in newest first until the budget is spent, and what does
not fit stays reachable through the two tools. The total never exceeds the
budget by the CJK-aware estimate of :mod:`memoryd.inject`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from memoryd.context.config import MAX_BUDGET_TOKENS, QUERY_MESSAGES, RECALL_SHARE, ContextConfig
from memoryd.context.messages import MESSAGE_OVERHEAD_TOKENS
from memoryd.context.models import StoredMessage, Summary
from memoryd.context.recall import Recall
from memoryd.context.render import HINT, SUMMARY_ROLE, summary_text, summary_tokens
from memoryd.errors import ValidationError
from memoryd.inject import estimate_tokens

RECALL_ROLE = "system"


@dataclass
class Assembled:
    messages: list[dict[str, Any]]
    system_addition: str
    estimated_tokens: int  # named as over REST: the same object everywhere
    budget_tokens: int
    summaries: int = 0  # summaries in the context
    dropped: int = 0  # items before the tail that did not fit
    layers: dict[str, list[str]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "messages": self.messages,
            "system_addition": self.system_addition,
            "estimated_tokens": self.estimated_tokens,
            "budget_tokens": self.budget_tokens,
            "summaries": self.summaries,
            "dropped": self.dropped,
            "recall": self.layers,
        }


def check_budget(budget: Any) -> int:
    if isinstance(budget, bool) or not isinstance(budget, int):
        raise ValidationError(f"budget_tokens must be a whole number, got {budget!r}")
    if not 1 <= budget <= MAX_BUDGET_TOKENS:
        raise ValidationError(f"budget_tokens must be between 1 and {MAX_BUDGET_TOKENS}")
    return budget


def message_json(m: StoredMessage) -> dict[str, Any]:
    data = m.to_json()
    return {
        k: data[k] for k in ("id", "role", "content", "tool_calls", "tool_results") if k in data
    }


def assemble(
    history: list[StoredMessage | Summary],
    tail: list[StoredMessage],
    recall: Recall,
    config: ContextConfig,
    budget: int,
    query: str | None,
    compacted: Callable[[str, int], list[StoredMessage]] | None = None,
) -> Assembled:
    """``history``: the context items before the fresh tail, oldest first."""
    budget = check_budget(budget)
    tail_tokens = sum(m.tokens for m in tail)
    hint_tokens = estimate_tokens(HINT) + MESSAGE_OVERHEAD_TOKENS if history else 0
    if tail_tokens + hint_tokens > budget:
        raise ValidationError(
            f"budget_tokens {budget} is smaller than the fresh tail ({tail_tokens} tokens, "
            f"the {len(tail)} newest messages kept verbatim)"
            + (f" and the hint ({hint_tokens} tokens)" if hint_tokens else "")
        )
    left = budget - tail_tokens - hint_tokens
    if query is None:
        recent = [m.content for m in tail[-QUERY_MESSAGES:]]
        query = "\n".join(recent)
    recalled = recall.recall(query, int(left * RECALL_SHARE), [m.content for m in tail], compacted)
    recall_tokens = (
        recalled.tokens + estimate_tokens(RECALL_ROLE) + MESSAGE_OVERHEAD_TOKENS
        if recalled.sections
        else 0
    )
    left -= recall_tokens
    kept: list[StoredMessage | Summary] = []
    for item in reversed(history):
        cost = _cost(item)
        if cost > left:
            break  # older ones stay out too: the context keeps its order without gaps
        kept.append(item)
        left -= cost
    kept.reverse()
    messages: list[dict[str, Any]] = []
    if recalled.sections:
        messages.append({"role": RECALL_ROLE, "content": recalled.text})
    summaries = 0
    for item in kept:
        if isinstance(item, Summary):
            summaries += 1
            messages.append(
                {
                    "role": SUMMARY_ROLE,
                    "content": summary_text(
                        item.id, item.kind, item.first_seq, item.last_seq, item.content
                    ),
                    "summary_id": item.id,
                }
            )
        else:
            messages.append(message_json(item))
    messages += [message_json(m) for m in tail]
    used = budget - left
    return Assembled(
        messages=messages,
        system_addition=HINT if history else "",
        estimated_tokens=used,
        budget_tokens=budget,
        summaries=summaries,
        dropped=len(history) - len(kept),
        layers=recalled.layers,
    )


def _cost(item: StoredMessage | Summary) -> int:
    if isinstance(item, Summary):
        return summary_tokens(item.id, item.kind, item.first_seq, item.last_seq, item.content)
    return item.tokens


def counted(assembled: Assembled) -> int:
    """The assembled context's cost by the estimate, recounted from what is returned."""
    total = (
        estimate_tokens(assembled.system_addition) + MESSAGE_OVERHEAD_TOKENS
        if assembled.system_addition
        else 0
    )
    for m in assembled.messages:
        total += estimate_tokens(str(m["content"])) + MESSAGE_OVERHEAD_TOKENS
        total += estimate_tokens(str(m["role"]))
    return total
