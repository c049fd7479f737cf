"""The simple verbatim stores memoryd is measured against, over the same documents.

``bm25``: FTS5 BM25 over the raw text, the query's words OR-ed together.
``dense``: cosine similarity with the same embedding model. Both rank
documents; a benchmark ranks sessions by their best document.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Sequence

import numpy as np

from memoryd.embed import Embedder

_WORD = re.compile(r"\w+")


class Baselines:
    def __init__(self, embedder: Embedder, texts: Sequence[str], groups: Sequence[str]) -> None:
        self.embedder = embedder
        self.groups = list(groups)
        self.vectors = embedder.embed(list(texts))
        self.db = sqlite3.connect(":memory:")
        self.db.execute("CREATE VIRTUAL TABLE d USING fts5(text)")
        self.db.executemany(
            "INSERT INTO d(rowid, text) VALUES (?, ?)", [(i, t) for i, t in enumerate(texts)]
        )

    def bm25(self, query: str, k: int) -> list[str]:
        words = list(dict.fromkeys(_WORD.findall(query.lower())))
        if not words:
            return []
        match = " OR ".join('"' + w.replace('"', '""') + '"' for w in words)
        rows = self.db.execute(
            "SELECT rowid FROM d WHERE d MATCH ? ORDER BY bm25(d) LIMIT ?", (match, k)
        ).fetchall()
        return [self.groups[r[0]] for r in rows]

    def dense(self, query: str, k: int) -> list[str]:
        scores = self.vectors @ self.embedder.embed_one(query)
        top = np.argsort(-scores, kind="stable")[:k]
        return [self.groups[i] for i in top]
