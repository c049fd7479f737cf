"""The reconciliation prompt (seed 000 §1.4) and the answer it must give.

Existing memories are shown as ``[0]``, ``[1]``, … and facts as ``F0``,
``F1``, …: the model never sees a memory's UUID, so it cannot leak or
mangle one, and small integers cost fewer tokens. The caller maps the
integers back; one it does not know becomes a CREATE.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, field_validator

DecisionName = Literal[
    "create", "merge", "skip", "supersede", "support", "contextualize", "contradict"
]

RECONCILE_SYSTEM = """\
You keep a user's long-term memory consistent. You get NEW FACTS (F0, F1, …) and \
EXISTING MEMORIES ([0], [1], …). Decide, for every new fact, exactly one of:

- "create": genuinely new information; target null.
- "merge": the fact adds detail to existing memory [target]; give "merged_content", \
one statement combining both, in the language of the memories.
- "skip": the fact is a duplicate of, or says less than, memory [target].
- "supersede": the fact updates or replaces outdated memory [target].
- "support": the fact confirms memory [target] without adding anything.
- "contextualize": the fact adds situational nuance to memory [target] (for example \
"prefers tea in the evening"); give a short "context_label" ("evening").
- "contradict": the fact directly contradicts memory [target] and both may hold \
information worth keeping.

"target" is the number in brackets of the existing memory concerned, or null for \
"create". Never invent numbers. Keep every text in the user's language.
Answer with JSON only, no prose, no code fence, one decision per fact:
{"decisions": [{"fact_index": 0, "decision": "create", "target": null, \
"merged_content": null, "context_label": null}]}"""


class DecisionAnswer(BaseModel):
    """One decision; the decision name accepts any letter case."""

    model_config = ConfigDict(extra="ignore")

    fact_index: int
    decision: DecisionName
    target: int | None = None
    merged_content: str | None = None
    context_label: str | None = None

    @field_validator("decision", mode="before")
    @classmethod
    def _lower(cls, value: object) -> object:
        return value.strip().lower() if isinstance(value, str) else value


class ReconcileAnswer(BaseModel):
    """The whole answer: one decision per fact (missing ones fall back to rules)."""

    model_config = ConfigDict(extra="ignore")

    decisions: list[DecisionAnswer]
