"""Stage 6 with the configured LLM as the reranker (``MEMORYD_RERANK_PROVIDER=llm``).

Seed 003's last step of retrieval: the model reads the query and the
candidates and scores each, blended like a hosted cross-encoder's scores
(:func:`memoryd.retrieve.cross_encoder.cross_encoder_rerank`). One chat call
a search, so it costs the model's latency on every search: it is off unless
asked for. A model that fails, or answers a number of scores other than the
candidates', leaves the ranking as it was.
"""

from __future__ import annotations

from memoryd.llm.client import LLMClient
from memoryd.prompts.rerank import RERANK_MAX_SCORE, RERANK_SYSTEM, RerankAnswer, rerank_prompt
from memoryd.retrieve.cross_encoder import CrossEncoder


class LlmCrossEncoder(CrossEncoder):
    """Scores (query, document) pairs with a chat model, in one call for all documents."""

    def __init__(self, llm: LLMClient) -> None:
        self.llm = llm

    def rerank(self, query: str, documents: list[str]) -> list[float]:
        answer = self.llm.complete_json(
            [
                {"role": "system", "content": RERANK_SYSTEM},
                {"role": "user", "content": rerank_prompt(query, documents)},
            ],
            RerankAnswer,
        )
        if len(answer.scores) != len(documents):
            raise ValueError(f"{len(answer.scores)} scores for {len(documents)} results")
        return [min(max(s, 0.0), RERANK_MAX_SCORE) / RERANK_MAX_SCORE for s in answer.scores]
