"""The rerank prompt: the LLM scores how well each candidate answers the query.

Candidates are shown as ``[0]``, ``[1]``, … and the model answers one score
per number, 0 to 10, in order. The caller checks that it got one score per
candidate and scales them to [0, 1]; an answer of the wrong length changes
nothing (stage 6 keeps the ranking it had).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

# what one candidate may show the model: a turn or a memory rarely needs more to be judged,
# and the prompt of a 20-candidate rerank stays near 2,000 tokens
RERANK_DOCUMENT_CHARS = 400
RERANK_MAX_SCORE = 10.0

RERANK_SYSTEM = """\
You judge search results for a memory system. You get a QUERY and numbered RESULTS \
[0], [1], … (things a user or an assistant said or stored). Score each result by how \
well it helps answer the query: 10 = states the answer, 7 = clearly bears on it, \
3 = same topic only, 0 = unrelated. Judge each result on its own; do not favour an order.
Answer with JSON only, no prose, no code fence, one score per result in the order shown:
{"scores": [7, 0, 10]}"""


class RerankAnswer(BaseModel):
    """One score per result shown, in order, each 0 to 10."""

    model_config = ConfigDict(extra="ignore")

    scores: list[float] = Field(default_factory=list)


def rerank_prompt(query: str, documents: list[str]) -> str:
    """The user message: the query, then each result numbered and cut to a bounded length."""
    lines = [f"QUERY: {query}", "RESULTS:"]
    for i, document in enumerate(documents):
        text = " ".join(document.split())
        if len(text) > RERANK_DOCUMENT_CHARS:
            text = text[:RERANK_DOCUMENT_CHARS].rsplit(" ", 1)[0] + " …"
        lines.append(f"[{i}] {text}")
    return "\n".join(lines)
