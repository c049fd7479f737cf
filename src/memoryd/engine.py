"""The parts every tenant shares: settings, the store, the model, the retriever.

A server serves many tenants from one process; loading the model or opening
the database once per tenant would be wasteful, so the heavy parts live here
and ``MemoryService`` is a light per-tenant view over one engine.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memoryd.config import Settings
from memoryd.errors import StorageError, ValidationError
from memoryd.jobs.worker import INGEST, TaskWorker
from memoryd.store import SQLiteStore, open_store
from memoryd.store.protocol import Store

if TYPE_CHECKING:
    # loaded on first use: a command that only reads the store (memoryd list) starts
    # without NumPy, the model runtime, the retrieval stages or an HTTP client
    import numpy as np
    import numpy.typing as npt

    from memoryd.embed import Embedder
    from memoryd.jobs.embed_queue import EmbedQueue
    from memoryd.retrieve import Retriever
    from memoryd.retrieve.cross_encoder import CrossEncoder
    from memoryd.text.noise import NoiseFilter

log = logging.getLogger(__name__)


def prepare_home(home: Path) -> Path:
    """The data directory, created if missing; a clear error when it cannot be one."""
    if home.exists() and not home.is_dir():
        raise ValidationError(
            f"the data directory {home} is a file, not a directory; "
            "pass --home (or MEMORYD_HOME) a directory"
        )
    try:
        home.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise ValidationError(f"cannot create the data directory {home}: {reason}") from None
    return home


class Engine:
    def __init__(self, settings: Settings, embedder: Embedder | None = None) -> None:
        self.settings = settings
        self.home = prepare_home(Path(settings.home))
        self.store: Store = open_store(settings.database_url, self.home)
        self._embedder = embedder
        self._embedder_lock = threading.Lock()
        self._retriever: Retriever | None = None
        self.background = ThreadPoolExecutor(max_workers=1, thread_name_prefix="memoryd-bg")
        self.workers: dict[str, TaskWorker] = {}
        self._embed_queue: EmbedQueue | None = None
        self._worker_lock = threading.Lock()
        self._noise_prototypes: npt.NDArray[np.float32] | None = None
        # set when the process stops on request (Ctrl-C): long tasks check it between units
        self.interrupted = threading.Event()

    @property
    def embedder(self) -> Embedder:
        """The configured model, loaded on first use and checked against the store."""
        from memoryd.embed import create_embedder

        with self._embedder_lock:
            if self._embedder is None:
                self._embedder = create_embedder(self.settings)
            if not self.store.embedding_bound():
                self.store.bind_embedding_model(
                    self._embedder.name, self._embedder.dim, self.settings.hnsw_threshold
                )
            return self._embedder

    @property
    def sqlite_store(self) -> SQLiteStore:
        """The SQLite store, for what only it can do (raw SQL over the file)."""
        if not isinstance(self.store, SQLiteStore):
            raise ValidationError(
                "this needs the SQLite backend; it is not available on PostgreSQL yet"
            )
        return self.store

    @property
    def retriever(self) -> Retriever:
        from memoryd.retrieve import Retriever
        from memoryd.retrieve.cross_encoder import create_cross_encoder

        if self._retriever is None:
            s = self.settings
            reranker: CrossEncoder | None
            if s.rerank_provider == "llm":
                reranker = self._llm_reranker()
            else:
                reranker = create_cross_encoder(
                    s.rerank_provider, s.rerank_api_key, s.rerank_model, s.rerank_base_url
                )
            self._retriever = Retriever(self.store, self.embedder, reranker)
        return self._retriever

    def _llm_reranker(self) -> CrossEncoder:
        from memoryd.llm import create_llm
        from memoryd.retrieve.llm_rerank import LlmCrossEncoder

        llm = create_llm(self.settings)
        if llm is None:
            raise ValidationError(
                "MEMORYD_RERANK_PROVIDER=llm reranks with the LLM: set MEMORYD_LLM_BASE_URL "
                "and MEMORYD_LLM_MODEL too"
            )
        return LlmCrossEncoder(llm)

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Vectors for ``texts``, computed once per distinct text and model."""
        import numpy as np

        from memoryd.embed import content_hash
        from memoryd.store.rows import blob_to_vector, vector_to_blob

        embedder = self.embedder
        if not texts:
            return np.zeros((0, embedder.dim), dtype=np.float32)
        hashes = [content_hash(t) for t in texts]
        stored = self.store.cached_vectors(embedder.name, list(dict.fromkeys(hashes)))
        found = {h: blob_to_vector(blob, embedder.dim) for h, blob in stored.items()}
        missing = list(
            dict.fromkeys(t for t, h in zip(texts, hashes, strict=True) if h not in found)
        )
        if missing:
            fresh = dict(zip(map(content_hash, missing), embedder.embed(missing), strict=True))
            self.store.cache_vectors(
                embedder.name, [(h, vector_to_blob(v)) for h, v in fresh.items()]
            )
            found.update(fresh)
        return np.stack([found[h] for h in hashes])

    def start_worker(
        self,
        run: Callable[[dict[str, Any]], dict[str, Any]],
        kind: str = INGEST,
        threads: int = 1,
        on_give_up: Callable[[str], None] | None = None,
    ) -> TaskWorker:
        """The process's worker for one kind of task, started once (orphans resume first)."""
        with self._worker_lock:
            if kind not in self.workers:
                worker = TaskWorker(self.store, run, kind, threads, on_give_up)
                worker.start()
                self.workers[kind] = worker
            return self.workers[kind]

    def embed_queue(self) -> EmbedQueue:
        """The process's thread that embeds turns stored before their vectors (started once)."""
        from memoryd.jobs.embed_queue import EmbedQueue

        with self._worker_lock:
            if self._embed_queue is None:
                self._embed_queue = EmbedQueue(self.store, self.embed)
                self._embed_queue.start()
            return self._embed_queue

    def noise_filter(self, learned: npt.NDArray[np.float32] | None = None) -> NoiseFilter:
        """A noise filter; the prototypes are embedded once per process."""
        from memoryd.text.noise import NoiseFilter

        if self._noise_prototypes is None:
            self._noise_prototypes = NoiseFilter.build(self.embed).prototypes
        return NoiseFilter.with_learned(self._noise_prototypes, learned)

    def touch(self, ids: list[str], at_us: int) -> None:
        """Count a recall in the background: a search never waits for it."""
        self.background.submit(self._touch, ids, at_us)

    def _touch(self, ids: list[str], at_us: int) -> None:
        try:
            self.store.touch(ids, at_us)
        except StorageError as exc:  # recall counts are not worth failing a search over
            log.warning("could not record recall of %d memories: %s", len(ids), exc)

    def interrupt(self) -> None:
        """Stop soon: workers claim nothing more, a running import stops after its unit."""
        self.interrupted.set()
        for worker in self.workers.values():
            worker.stop_claiming()

    def stop_workers(self) -> None:
        """Let the task workers finish what they hold, then stop them: the store stays still."""
        for worker in self.workers.values():
            worker.stop()
        if self._embed_queue is not None:
            self._embed_queue.stop()

    def close(self) -> None:
        self.stop_workers()
        self.background.shutdown(wait=True)
        self.store.close()
