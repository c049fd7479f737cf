"""Queries of concurrent searches embedded together: one model call for all that wait.

Under load a server embeds one query per request, each call with the model's
own threads, and on a few cores those calls crowd each other out: throughput
falls as clients are added. Here the first caller that finds no call running
leads: it embeds every query waiting (up to ``MAX_BATCH``) in one call and
hands each caller its row; callers that arrive meanwhile wait for the next
call, which one of them leads. Nothing waits on a timer, so a lone query is
embedded at once, as before; batches form only when queries queue up anyway.
"""

from __future__ import annotations

import threading
from concurrent.futures import Future

from memoryd.embed.client import Embedder, Vectors

# queries one model call takes at most (the bundled model's own batches are 8)
MAX_BATCH = 32


class QueryBatcher:
    """``embed_query`` for many threads at once, over one embedder."""

    def __init__(self, embedder: Embedder, max_batch: int = MAX_BATCH) -> None:
        self.embedder = embedder
        self._max_batch = max_batch
        self._turn = threading.Condition()
        self._waiting: list[tuple[str, Future[Vectors]]] = []
        self._leading = False
        self.calls = 0  # model calls made, and queries embedded: their ratio is the batch
        self.queries = 0

    def embed_query(self, text: str) -> Vectors:
        """The query's vector, as ``embedder.embed_query`` gives it."""
        mine: Future[Vectors] = Future()
        with self._turn:
            self._waiting.append((text, mine))
        while True:
            with self._turn:
                while self._leading and not mine.done():
                    self._turn.wait()
                if mine.done():
                    return mine.result()
                self._leading = True
                batch = self._waiting[: self._max_batch]
                del self._waiting[: self._max_batch]
            try:
                self._embed(batch)
            finally:
                with self._turn:
                    self._leading = False
                    self._turn.notify_all()

    def _embed(self, batch: list[tuple[str, Future[Vectors]]]) -> None:
        try:
            vectors = self.embedder.embed_queries([text for text, _ in batch])
        except BaseException as exc:  # every caller of the batch gets the model's error
            for _, waiting in batch:
                waiting.set_exception(exc)
            return
        self.calls += 1
        self.queries += len(batch)
        for (_, waiting), vector in zip(batch, vectors, strict=True):
            waiting.set_result(vector)
