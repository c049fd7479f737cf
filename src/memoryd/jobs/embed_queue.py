"""The thread that embeds turns stored before their vectors (see ``store.pending``).

The REST door answers a conversation as soon as its turns are durable; this
thread computes their vectors right after, in batches, so they are found by
meaning within a second or two. It starts with the server and first embeds
whatever a stopped process left queued: nothing acknowledged stays without
a vector. Until its vector is written a turn is still found by its words.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

from memoryd.errors import MemorydError
from memoryd.store.protocol import SessionRecords
from memoryd.text.conversation import embedding_text

log = logging.getLogger(__name__)

# turns embedded per batch: one model call, one write
BATCH = 64
# how long an idle queue waits before it looks again (rows queued by another process)
POLL_S = 1.0
# after a failed batch (the model unreachable): wait before trying again
RETRY_S = 5.0
IDLE_POLL_S = 0.01


class EmbedQueue:
    """One thread per process; ``notify`` after queueing wakes it at once."""

    def __init__(
        self,
        store: SessionRecords,
        embed: Callable[[Sequence[str]], npt.NDArray[np.float32]],
    ) -> None:
        self.store = store
        self.embed = embed
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="memoryd-embed", daemon=True)

    def start(self) -> None:
        gone = self.store.drop_orphan_embeddings()
        if gone:
            log.info("dropped %d queued embeddings of memories that no longer exist", gone)
        left = self.store.count_pending_embeddings()
        if left:
            log.info("resuming %d queued embeddings left by a stopped process", left)
        self._thread.start()

    def notify(self) -> None:
        self._wake.set()

    def stop(self) -> None:
        """Finish the batch in hand and stop; what is queued waits for the next start."""
        self._stop.set()
        self._wake.set()
        if self._thread.is_alive():
            self._thread.join()

    def wait_idle(self, timeout_s: float) -> bool:
        """True once the queue is empty (benches: "searchable by meaning now")."""
        deadline = time.monotonic() + timeout_s
        while self.store.count_pending_embeddings():
            if time.monotonic() > deadline:
                return False
            time.sleep(IDLE_POLL_S)
        return True

    def run_once(self) -> int:
        """Embed one batch; how many turns got their vectors."""
        batch = self.store.pending_embeddings(BATCH)
        if not batch:
            return 0
        vectors = self.embed([embedding_text(m) for m in batch])
        self.store.store_embeddings([m.id for m in batch], vectors)
        return len(batch)

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                done = self.run_once()
            except MemorydError as exc:  # the model failed: the rows stay queued
                log.error("embedding queued turns failed, retrying: %s", exc.message)
                self._stop.wait(RETRY_S)
                continue
            except Exception:
                log.exception("embedding queued turns failed, retrying")
                self._stop.wait(RETRY_S)
                continue
            if done:
                continue
            self._wake.wait(POLL_S)
            self._wake.clear()
