"""The embedder seam: every provider turns texts into unit-length float32 rows."""

from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

Vectors = npt.NDArray[np.float32]


class Embedder(ABC):
    """A text embedding model.

    ``name`` and ``dim`` are recorded by the store: vectors of two models are
    not comparable, so a store opened with another model is refused rather
    than answering with silent nonsense.
    """

    name: str
    dim: int
    # whether the model runs in this process (its time is CPU) or behind the network
    runs_here: bool = True

    @abstractmethod
    def _embed(self, texts: Sequence[str]) -> Vectors:
        """Embed a non-empty batch; rows need not be normalised."""

    def embed(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = np.asarray(self._embed(list(texts)), dtype=np.float32)
        if vectors.shape != (len(texts), self.dim):
            from memoryd.errors import EmbeddingError

            raise EmbeddingError(
                f"{self.name} returned shape {vectors.shape}, expected ({len(texts)}, {self.dim})"
            )
        return normalize_rows(vectors)

    def embed_one(self, text: str) -> Vectors:
        row: Vectors = self.embed([text])[0]
        return row

    def embed_query(self, text: str) -> Vectors:
        """A search query's vector. The same as a memory's for symmetric models; a model
        trained with separate query and passage prefixes (E5, BGE) overrides
        :meth:`embed_queries`."""
        row: Vectors = self.embed_queries([text])[0]
        return row

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        """Search queries' vectors, in one call."""
        return self.embed(texts)


def normalize_rows(vectors: Vectors) -> Vectors:
    """Unit rows, so a dot product is the cosine. A zero row is an error, never stored."""
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    if np.any(norms == 0) or not np.all(np.isfinite(norms)):
        from memoryd.errors import EmbeddingError

        raise EmbeddingError("the model returned a zero or non-finite vector")
    unit: Vectors = (vectors / norms).astype(np.float32)
    return unit


def content_hash(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8")).digest()
