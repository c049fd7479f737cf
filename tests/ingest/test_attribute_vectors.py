"""The attribute examples' vectors shipped in the package are those of today's examples."""

from __future__ import annotations

import numpy as np

from memoryd.embed.local import LocalEmbedder
from memoryd.text.attribute_meaning import Prototypes, examples, shipped


def test_the_shipped_vectors_are_the_examples_of_today(embedder: LocalEmbedder) -> None:
    """After an example changes, `python -m bench attribute-vectors` ships them again."""
    labels, texts = examples()
    vectors = shipped(embedder.name, texts)
    assert vectors is not None, "run: python -m bench attribute-vectors"
    assert vectors.shape == (len(texts), embedder.dim)
    np.testing.assert_allclose(vectors, embedder.embed(texts), atol=1e-5)
    assert Prototypes.of_embedder(embedder)[0] == labels


def test_other_examples_or_another_model_are_embedded(embedder: LocalEmbedder) -> None:
    _, texts = examples()
    assert shipped(embedder.name, [*texts, "I also keep bees"]) is None
    assert shipped("another-model", texts) is None
