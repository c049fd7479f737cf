"""The reflection prompt: one answer synthesised across recalled memories, with citations.

Memories are shown as ``[0]``, ``[1]``, …, never by their ids, as in
reconciliation: the model cannot mangle an id it never saw. It cites the
numbers it used; the caller maps them back to ids and drops any number it
did not show, so an answer can only lean on memories that exist.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

REFLECT_SYSTEM = """\
You answer a question about a user from their long-term memories, and only from them. \
You get the QUESTION and the MEMORIES, numbered [0], [1], …, each with the date it was \
stored. Synthesise one short answer across the memories that bear on the question: \
combine them, and where two disagree prefer the newer one and say it changed. Cite every \
memory you used by its number in brackets, in the text ("prefers tea [2]") and in \
"citations". Never state anything the memories do not say, and never cite a number that \
is not listed. If no memory answers the question, say so and cite nothing.
Answer with JSON only, no prose, no code fence:
{"answer": "…", "citations": [0, 2]}"""


class ReflectAnswer(BaseModel):
    """The model's answer and the memory numbers it cites."""

    model_config = ConfigDict(extra="ignore")

    answer: str
    citations: list[int] = Field(default_factory=list)
