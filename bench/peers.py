"""The bare vector stores memoryd is compared with, on the speed bench's own data.

Each peer is used as a user would use it: the same texts and the same
vectors as memoryd's store of that size (the bundled model's, computed once),
loaded in batches, then searched with the same queries: once with the query's
vector given (the store's part) and once from the question's words (the
model's embedding included, as memoryd's uncached search). Reported per size,
under the same keys as memoryd's row: ``store_search_p95_ms`` (the store's part),
``e2e_search_p95_ms`` and ``disk_bytes_per_memory``.

* ``chroma``: a persistent Chroma collection (cosine HNSW), its own
  embedding function off: vectors come in as they are.
* ``sqlite-vec``: a ``vec0`` virtual table in one SQLite file, with the
  texts in a table beside it, searched by ``MATCH … ORDER BY distance``
  (on the SQLite of ``pysqlite3-binary``, which loads extensions).
"""

from __future__ import annotations

import shutil
import sqlite3
import time
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from bench.common import percentiles
from memoryd.embed import Embedder

Vectors = npt.NDArray[np.float32]
BATCH = 5_000
K = 10
NAMES = ("chroma", "sqlite-vec")


class Peer(Protocol):
    def load(self, texts: list[str], vectors: Vectors) -> None: ...
    def search(self, vector: Vectors) -> list[str]: ...
    def close(self) -> None: ...


class ChromaPeer:
    def __init__(self, path: Path) -> None:
        import chromadb

        self._client = chromadb.PersistentClient(path=str(path))
        self._rows = self._client.create_collection(
            "bench", embedding_function=None, configuration={"hnsw": {"space": "cosine"}}
        )

    def load(self, texts: list[str], vectors: Vectors) -> None:
        for start in range(0, len(texts), BATCH):
            at = slice(start, start + BATCH)
            self._rows.add(
                ids=[str(i) for i in range(start, start + len(texts[at]))],
                embeddings=vectors[at],
                documents=texts[at],
            )

    def search(self, vector: Vectors) -> list[str]:
        found = self._rows.query(query_embeddings=vector[None, :], n_results=K)
        return list(found["documents"][0]) if found["documents"] else []

    def close(self) -> None:
        self._client.clear_system_cache()


class SqliteVecPeer:
    def __init__(self, path: Path) -> None:
        # a Python whose sqlite3 cannot load extensions (pyenv's, often) runs it on the
        # SQLite of pysqlite3-binary, which can
        import pysqlite3
        import sqlite_vec

        self._conn = pysqlite3.connect(str(path / "vec.db"), check_same_thread=False)
        self._conn.enable_load_extension(True)
        sqlite_vec.load(self._conn)
        self._conn.enable_load_extension(False)

    def load(self, texts: list[str], vectors: Vectors) -> None:
        dim = vectors.shape[1]
        with self._conn:
            self._conn.execute("CREATE TABLE docs (id INTEGER PRIMARY KEY, text TEXT NOT NULL)")
            self._conn.execute(f"CREATE VIRTUAL TABLE vecs USING vec0(embedding float[{dim}])")
        for start in range(0, len(texts), BATCH):
            rows = list(enumerate(texts[start : start + BATCH], start=start + 1))
            with self._conn:
                self._conn.executemany("INSERT INTO docs (id, text) VALUES (?, ?)", rows)
                self._conn.executemany(
                    "INSERT INTO vecs (rowid, embedding) VALUES (?, ?)",
                    [(i, vectors[i - 1].tobytes()) for i, _ in rows],
                )

    def search(self, vector: Vectors) -> list[str]:
        rows = self._conn.execute(
            "SELECT d.text FROM (SELECT rowid, distance FROM vecs WHERE embedding MATCH ? "
            "ORDER BY distance LIMIT ?) v JOIN docs d ON d.id = v.rowid ORDER BY v.distance",
            (np.asarray(vector, np.float32).tobytes(), K),
        ).fetchall()
        return [r[0] for r in rows]

    def close(self) -> None:
        self._conn.close()


MAKERS: dict[str, Callable[[Path], Peer]] = {"chroma": ChromaPeer, "sqlite-vec": SqliteVecPeer}


def _disk_bytes(path: Path) -> int:
    return sum(p.stat().st_blocks * 512 for p in path.rglob("*") if p.is_file())


def store_rows(database: Path, dim: int) -> tuple[list[str], Vectors]:
    """The texts and vectors of memoryd's store of a size, as each peer loads them (a store
    built before schema v24 holds them in full precision: each read as it was written)."""
    from memoryd.store.rows import blob_to_vector

    with closing(sqlite3.connect(f"file:{database}?mode=ro", uri=True)) as conn:
        rows = conn.execute(
            "SELECT content, vector FROM memories WHERE vector IS NOT NULL ORDER BY rowid"
        ).fetchall()
    return [r[0] for r in rows], np.stack([blob_to_vector(r[1], dim) for r in rows])


def measure(
    name: str, work: Path, texts: list[str], vectors: Vectors, asked: list[str], model: Embedder
) -> dict[str, Any]:
    """One peer at one size: load, then each query searched by vector and by its words."""
    path = work / f"peer-{name}"
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    peer = MAKERS[name](path)
    try:
        started = time.perf_counter()
        peer.load(texts, vectors)
        load_s = time.perf_counter() - started
        given = model.embed(asked)
        peer.search(given[0])  # warm: the first query pays for opening the index
        store = []
        for v in given:
            t = time.perf_counter()
            peer.search(v)
            store.append((time.perf_counter() - t) * 1000)
        e2e = []
        for q in asked:
            t = time.perf_counter()
            peer.search(model.embed_query(q))
            e2e.append((time.perf_counter() - t) * 1000)
    finally:
        peer.close()
    out = {
        "load_per_s": round(len(texts) / load_s, 1),
        "store_search_p95_ms": percentiles(store)["p95"],
        "e2e_search_p95_ms": percentiles(e2e)["p95"],
        "disk_bytes_per_memory": round(_disk_bytes(path) / len(texts)),
    }
    shutil.rmtree(path, ignore_errors=True)
    return out
