"""Embeddings from any OpenAI-compatible endpoint (OpenAI, Ollama, vLLM, LM Studio, …)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from memoryd.embed.client import Embedder, Vectors
from memoryd.errors import EmbeddingError, ValidationError
from memoryd.extras import extra

BATCH_SIZE = 64
TIMEOUT_S = 30.0


class OpenAIEmbedder(Embedder):
    runs_here = False  # behind the network

    def __init__(
        self,
        model: str,
        base_url: str,
        api_key: str = "",
        dimensions: int | None = None,
        batch_size: int = BATCH_SIZE,
    ) -> None:
        with extra("llm", "the openai embedder"):
            from openai import OpenAI

        if not model:
            raise ValidationError("MEMORYD_EMBED_MODEL is required with the openai embedder")
        self._client = OpenAI(base_url=base_url, api_key=api_key or "none", timeout=TIMEOUT_S)
        self._model = model
        self._dimensions = dimensions
        self._batch_size = batch_size
        self.name = f"openai:{model}" + (f"@{dimensions}" if dimensions else "")
        self.dim = dimensions or len(self._request(["dimension probe"])[0])

    def _request(self, texts: list[str]) -> list[list[float]]:
        from openai import OpenAIError

        try:
            if self._dimensions:
                response = self._client.embeddings.create(
                    model=self._model, input=texts, dimensions=self._dimensions
                )
            else:
                response = self._client.embeddings.create(model=self._model, input=texts)
        except OpenAIError as exc:
            raise EmbeddingError(f"{self._model}: {exc}") from exc
        rows = sorted(response.data, key=lambda d: d.index)
        return [list(r.embedding) for r in rows]

    def _embed(self, texts: Sequence[str]) -> Vectors:
        rows: list[list[float]] = []
        for start in range(0, len(texts), self._batch_size):
            rows.extend(self._request(list(texts[start : start + self._batch_size])))
        lengths = {len(r) for r in rows}
        if len(lengths) > 1:
            raise EmbeddingError(f"{self._model} returned vectors of sizes {sorted(lengths)}")
        return np.asarray(rows, dtype=np.float32)
