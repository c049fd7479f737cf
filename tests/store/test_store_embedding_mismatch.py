"""A store embedded with one model is refused by another until ``memoryd reindex``."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from memoryd.embed.client import Embedder, Vectors
from memoryd.embed.local import LocalEmbedder
from memoryd.errors import EmbeddingMismatchError
from memoryd.portability import reindex
from memoryd.service import MemoryService


class HashEmbedder(Embedder):
    """Deterministic bag of hashed words: a real, tiny model for tests."""

    def __init__(self, name: str = "test-16", dim: int = 16) -> None:
        self.name = name
        self.dim = dim

    def _embed(self, texts: Sequence[str]) -> Vectors:
        out = np.full((len(texts), self.dim), 0.05, dtype=np.float32)
        for row, text in enumerate(texts):
            for word in re.findall(r"\w+", text.lower()):
                bucket = int.from_bytes(hashlib.sha256(word.encode()).digest()[:4], "big")
                out[row, bucket % self.dim] += 1.0
        return out


TEXTS = [
    "The user's dog is named Biscuit",
    "I prefer dark roast coffee in the morning",
    "My sister lives in Lisbon",
]


def _seed(home: Path, embedder: LocalEmbedder) -> list[str]:
    with MemoryService(home, embedder=embedder) as svc:
        ids = [svc.add(t).id for t in TEXTS]
        svc.ingest([{"role": "user", "content": "I adopted a cat named Miso"}], session_id="s1")
    return ids


@pytest.mark.parametrize(
    ("name", "dim"),
    [("test-16", 16), ("test-384", 384), ("all-MiniLM-L6-v2-onnx-int8", 16)],
    ids=["other-name-other-dim", "other-name-same-dim", "same-name-other-dim"],
)
def test_other_model_is_refused_with_a_reindex_hint(
    home: Path, embedder: LocalEmbedder, name: str, dim: int
) -> None:
    assert embedder.name == "all-MiniLM-L6-v2-onnx-int8"
    ids = _seed(home, embedder)
    with MemoryService(home, embedder=HashEmbedder(name, dim)) as svc:
        with pytest.raises(EmbeddingMismatchError) as info:
            svc.search("what is the dog called")
        message = str(info.value)
        assert "memoryd reindex" in message
        assert embedder.name in message and str(embedder.dim) in message
        assert name in message and str(dim) in message
        assert info.value.code == "embedding_mismatch"

        with pytest.raises(EmbeddingMismatchError, match="memoryd reindex"):
            svc.add("The user's cat is named Miso")
        with pytest.raises(EmbeddingMismatchError, match="memoryd reindex"):
            svc.ingest([{"role": "user", "content": "a new turn"}], session_id="s2")
        with pytest.raises(EmbeddingMismatchError):
            svc.update(ids[0], content="The user's dog is named Rex")
        # refusing is all it did: reads work, nothing was written or bound
        assert svc.list_memories(limit=100)[1] == len(TEXTS)
        assert svc.get(ids[0]).content == TEXTS[0]
        assert svc.get(ids[0]).version == 1
        assert [m["content"] for m in svc.session_messages()] == ["I adopted a cat named Miso"]
        assert svc.stats()["embedding_model"] == embedder.name
    # the original model still works on the untouched store
    with MemoryService(home, embedder=embedder) as svc:
        assert svc.search("what is the dog called", touch=False).results[0].memory.id == ids[0]


def test_reindex_rebinds_the_store_to_the_new_model(home: Path, embedder: LocalEmbedder) -> None:
    ids = _seed(home, embedder)
    fake = HashEmbedder()
    with MemoryService(home, embedder=fake) as svc:
        with pytest.raises(EmbeddingMismatchError):
            svc.search("dog Biscuit")
        assert reindex(svc) == len(TEXTS) + 1  # the session turn too

        assert svc.stats()["embedding_model"] == "test-16"
        for memory_id, text in zip(ids, TEXTS, strict=True):
            assert svc.get(memory_id).content == text
            vector = svc.store.get_vector(memory_id)
            assert vector is not None
            # stored in half precision: 11 significant bits
            np.testing.assert_allclose(vector, fake.embed_one(text), rtol=1e-3)
        hits = [r.memory.id for r in svc.search("dog Biscuit", touch=False).results]
        assert hits[0] == ids[0]
        # writes work again, with the new model
        added = svc.add("The user's cat is named Miso")
        vector = svc.store.get_vector(added.id)
        assert vector is not None and vector.shape == (16,)
        cats = {added.id, *[m.id for m in svc.list_memories(memory_type="session")[0]]}
        assert svc.search("cat Miso", touch=False).results[0].memory.id in cats

    # a fresh service with the new model needs no reindex; the old model is now refused
    with MemoryService(home, embedder=HashEmbedder()) as svc:
        assert svc.search("dog Biscuit", touch=False).results[0].memory.id == ids[0]
    with MemoryService(home, embedder=embedder) as svc:
        with pytest.raises(EmbeddingMismatchError, match="memoryd reindex"):
            svc.search("what is the dog called")
        assert svc.get(ids[0]).content == TEXTS[0]
