"""The compaction prompts: a leaf summary of messages, a condensed summary of summaries.

The summary replaces the text in the agent's context, so what the agent will
need later must survive it: names, numbers, dates, decisions, open questions.
The exact words stay recoverable (``lcm_expand_query``), so the summary may be
short; it must never invent.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

LEAF_SYSTEM = """\
You compress part of a conversation between a user and an AI agent so the agent can \
continue it with this summary in place of the messages.

Keep every name, number, date, amount, file name, decision, preference, commitment and \
open question. Say who said or decided what. Keep the order of events. Drop greetings, \
filler and repetition. Never add anything the messages do not say. Write in the \
language of the messages; never translate. Lines that start with "[Date: " give the \
date of the messages after them: keep them.

Use at most about {target} tokens. Answer with JSON only, no prose, no code fence:
{{"summary": "..."}}"""

CONDENSED_SYSTEM = """\
You merge consecutive summaries of one conversation into a single shorter summary, \
oldest first, so an AI agent can continue the conversation with it.

Keep every name, number, date, decision, preference, commitment and open question; \
drop what is repeated. Never add anything the summaries do not say. Write in their \
language; never translate. Keep "[Date: ...]" lines where the date changes.

Use at most about {target} tokens. Answer with JSON only, no prose, no code fence:
{{"summary": "..."}}"""


class CompactionAnswer(BaseModel):
    """The model's summary; an empty one is no answer."""

    model_config = ConfigDict(extra="ignore")

    summary: str = Field(min_length=1)
