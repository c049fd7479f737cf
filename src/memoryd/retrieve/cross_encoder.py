"""Stage 6: optional cross-encoder rerank over HTTP (Jina, Voyage, Cohere, Pinecone).

``score = 0.6 · rerank + 0.4 · original``. The stage is skipped when no
provider is configured, and a provider that fails or times out leaves the
original scores as they were: a reranker may improve a ranking, never erase it.
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from typing import Any

from memoryd.extras import extra
from memoryd.retrieve.candidate import Candidate
from memoryd.retrieve.config import RERANK_TIMEOUT_S, SearchConfig

log = logging.getLogger(__name__)


class CrossEncoder(ABC):
    """Scores (query, document) pairs; higher is more relevant, in [0, 1]."""

    @abstractmethod
    def rerank(self, query: str, documents: list[str]) -> list[float]: ...


class HttpCrossEncoder(CrossEncoder):
    """The rerank APIs share one shape: POST query + documents, get index/score pairs."""

    default_url: str = ""
    default_model: str = ""
    results_key = "results"
    score_key = "relevance_score"

    def __init__(
        self, api_key: str, model: str = "", base_url: str = "", timeout: float = RERANK_TIMEOUT_S
    ) -> None:
        self.api_key = api_key
        self.model = model or self.default_model
        self.url = base_url or self.default_url
        self.timeout = timeout

    def body(self, query: str, documents: list[str]) -> dict[str, Any]:
        return {
            "model": self.model,
            "query": query,
            "documents": documents,
            "top_n": len(documents),
        }

    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.api_key}"}

    def rerank(self, query: str, documents: list[str]) -> list[float]:
        # here: a search with no reranker configured never loads the HTTP client
        with extra("llm", "a reranking service"):
            import httpx

        response = httpx.post(
            self.url, json=self.body(query, documents), headers=self.headers(), timeout=self.timeout
        )
        response.raise_for_status()
        scores = [0.0] * len(documents)
        for item in response.json()[self.results_key]:
            scores[int(item["index"])] = float(item[self.score_key])
        return scores


class JinaCrossEncoder(HttpCrossEncoder):
    default_url = "https://api.jina.ai/v1/rerank"
    default_model = "jina-reranker-v2-base-multilingual"


class VoyageCrossEncoder(HttpCrossEncoder):
    default_url = "https://api.voyageai.com/v1/rerank"
    default_model = "rerank-2"
    results_key = "data"

    def body(self, query: str, documents: list[str]) -> dict[str, Any]:
        return {
            "model": self.model,
            "query": query,
            "documents": documents,
            "top_k": len(documents),
        }


class CohereCrossEncoder(HttpCrossEncoder):
    default_url = "https://api.cohere.com/v2/rerank"
    default_model = "rerank-v3.5"


class PineconeCrossEncoder(HttpCrossEncoder):
    default_url = "https://api.pinecone.io/rerank"
    default_model = "bge-reranker-v2-m3"
    results_key = "data"
    score_key = "score"

    def headers(self) -> dict[str, str]:
        return {"Api-Key": self.api_key, "X-Pinecone-API-Version": "2025-01"}

    def body(self, query: str, documents: list[str]) -> dict[str, Any]:
        return {
            "model": self.model,
            "query": query,
            "top_n": len(documents),
            "documents": [{"text": d} for d in documents],
            "return_documents": False,
        }


PROVIDERS: dict[str, type[HttpCrossEncoder]] = {
    "jina": JinaCrossEncoder,
    "voyage": VoyageCrossEncoder,
    "cohere": CohereCrossEncoder,
    "pinecone": PineconeCrossEncoder,
}


def create_cross_encoder(
    provider: str, api_key: str, model: str = "", base_url: str = ""
) -> CrossEncoder | None:
    if not provider:
        return None
    return PROVIDERS[provider](api_key=api_key, model=model, base_url=base_url)


def cross_encoder_rerank(
    candidates: list[Candidate], query: str, reranker: CrossEncoder | None, config: SearchConfig
) -> list[Candidate]:
    if reranker is None or not candidates:
        return candidates
    try:
        scores = reranker.rerank(query, [c.mem.content for c in candidates])
        if len(scores) != len(candidates):
            raise ValueError(f"{len(scores)} scores for {len(candidates)} documents")
        blended = [
            config.rerank_weight * float(s) + (1 - config.rerank_weight) * c.score
            for c, s in zip(candidates, scores, strict=True)
        ]
    except Exception as exc:  # the seed's contract: any rerank failure keeps the ranking
        log.warning("rerank failed, keeping the original scores: %s", exc)
        return candidates
    for c, score in zip(candidates, blended, strict=True):
        c.pre_rerank_score = c.score
        c.score = score
    return candidates
