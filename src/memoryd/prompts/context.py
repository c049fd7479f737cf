"""The compaction prompts: a leaf summary of messages, a condensed summary of summaries.

The summary replaces the text in the agent's context, so what the agent will
need later must survive it: names, numbers, dates, decisions, open questions.
The exact words stay recoverable (``lcm_expand_query``), so the summary may be
short; it must never invent.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

MAX_TRIPLE_PART = 200

LEAF_SYSTEM = """\
You compress part of a conversation between a user and an AI agent so the agent can \
continue it with this summary in place of the messages.

Keep every name, number, date, amount, file name, decision, preference, commitment and \
open question. Say who said or decided what. Keep the order of events. Drop greetings, \
filler and repetition. Never add anything the messages do not say. Write in the \
language of the messages; never translate. Lines that start with "[Date: " give the \
date of the messages after them: keep them.

Also list the facts the messages state as knowledge-graph triples: subject, relation, \
object (short: names and values, e.g. ["Dana", "moved launch to", "14 March 2026"]).

Use at most about {target} tokens. Answer with JSON only, no prose, no code fence:
{{"summary": "...", "triples": [["subject", "relation", "object"]]}}"""

CONDENSED_SYSTEM = """\
You merge consecutive summaries of one conversation into a single shorter summary, \
oldest first, so an AI agent can continue the conversation with it.

Keep every name, number, date, decision, preference, commitment and open question; \
drop what is repeated. Never add anything the summaries do not say. Write in their \
language; never translate. Keep "[Date: ...]" lines where the date changes.

Use at most about {target} tokens. Answer with JSON only, no prose, no code fence:
{{"summary": "..."}}"""


class CompactionAnswer(BaseModel):
    """The model's summary (an empty one is no answer) and, for a leaf, its triples.

    A triple that is not three short strings is left out rather than failing
    the summary: the triples are an addition to recall, the summary is the point.
    """

    model_config = ConfigDict(extra="ignore")

    summary: str = Field(min_length=1)
    triples: list[tuple[str, str, str]] = Field(default_factory=list)

    @field_validator("triples", mode="before")
    @classmethod
    def _usable(cls, value: object) -> object:
        if not isinstance(value, list):
            return []
        return [
            [str(part).strip() for part in t]
            for t in value
            if isinstance(t, list | tuple)
            and len(t) == 3
            and all(
                isinstance(part, str) and 0 < len(part.strip()) <= MAX_TRIPLE_PART for part in t
            )
        ]
