"""Concurrent searches' queries embedded together, each caller handed its own vector."""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np

from memoryd.embed.batcher import QueryBatcher
from memoryd.embed.client import Embedder, Vectors
from memoryd.embed.local import LocalEmbedder
from memoryd.errors import EmbeddingError


class Slowed(Embedder):
    """The bundled model, each call held until the test lets it go: queries queue up."""

    def __init__(self, model: LocalEmbedder) -> None:
        self.model, self.name, self.dim = model, model.name, model.dim
        self.go = threading.Event()
        self.entered = threading.Event()
        self.sizes: list[int] = []
        self.fail = False

    def _embed(self, texts: Sequence[str]) -> Vectors:
        self.entered.set()
        self.go.wait(timeout=30)
        self.sizes.append(len(texts))
        if self.fail:
            raise EmbeddingError("the model is gone")
        return self.model.embed(texts)


def _ask(batcher: QueryBatcher, texts: list[str]) -> tuple[dict[str, Vectors], list[BaseException]]:
    found: dict[str, Vectors] = {}
    failed: list[BaseException] = []

    def one(text: str) -> None:
        try:
            found[text] = batcher.embed_query(text)
        except BaseException as exc:
            failed.append(exc)

    threads = [threading.Thread(target=one, args=(t,)) for t in texts]
    first, rest = threads[0], threads[1:]
    first.start()
    assert isinstance(batcher.embedder, Slowed)
    batcher.embedder.entered.wait(timeout=30)  # the first call runs; the others queue
    for t in rest:
        t.start()
    while len(batcher._waiting) < len(rest):
        threading.Event().wait(0.01)
    batcher.embedder.go.set()
    for t in threads:
        t.join(timeout=60)
    return found, failed


def test_queued_queries_go_in_one_call_and_each_gets_its_own(embedder: LocalEmbedder) -> None:
    batcher = QueryBatcher(Slowed(embedder))
    texts = [f"where did the user park on day {i}" for i in range(12)]
    found, failed = _ask(batcher, texts)
    assert failed == []
    assert batcher.embedder.sizes == [1, 11]  # type: ignore[attr-defined]
    for text in texts:
        np.testing.assert_allclose(found[text], embedder.embed_query(text), atol=1e-5)


def test_a_failed_call_fails_each_of_its_callers_and_the_next_call_runs(
    embedder: LocalEmbedder,
) -> None:
    slowed = Slowed(embedder)
    slowed.fail = True
    batcher = QueryBatcher(slowed)
    found, failed = _ask(batcher, [f"query {i}" for i in range(5)])
    assert found == {} and len(failed) == 5
    assert all(isinstance(e, EmbeddingError) for e in failed)
    slowed.fail = False
    np.testing.assert_allclose(
        batcher.embed_query("query 9"), embedder.embed_query("query 9"), atol=1e-5
    )


def test_a_lone_query_waits_for_nothing(embedder: LocalEmbedder) -> None:
    batcher = QueryBatcher(embedder)
    assert batcher.embed_query("hello").shape == (embedder.dim,)
    assert (batcher.calls, batcher.queries) == (1, 1)
    assert batcher._waiting == []  # nothing left behind
