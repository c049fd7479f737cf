"""An export sent as it is written: memory bounded whatever the store's size.

Building the whole file before the first byte cost a 40 MB upload's store
266 MB a request, and two at once took the server from 0.9 to 2.7 GB. Here
a thread walks the store (its cursors stay on the thread that opened them; at most
:data:`WALKERS` at once) and hands lines over through a queue of at most :data:`CHUNKS`
chunks of about :data:`CHUNK_CHARS` characters: when the client reads slowly, the walk
waits. A client that goes away stops the walk at its next line; one that never reads
(it left before the answer began) ends it after :data:`IDLE_S`. Nothing the walk hands
over waits without end, and the walks are daemon threads: a read-only walk never holds
a stopping server (or test run) open.
"""

from __future__ import annotations

import contextlib
import queue
import threading
from collections.abc import AsyncIterator
from datetime import UTC, datetime

import anyio
from starlette.responses import StreamingResponse

from memoryd.portability import export_jsonl
from memoryd.service import MemoryService

NDJSON = "application/x-ndjson"
CHUNK_CHARS = 64 * 1024
CHUNKS = 16  # at most about 1 MiB waits for the client
# the walks at once (each keeps one store connection); more exports wait for one to end
WALKERS = 4
_walkers = threading.BoundedSemaphore(WALKERS)
# a client that reads nothing for this long has gone, whether or not it was noticed
IDLE_S = 300.0
_DONE = object()


class _Gone(Exception):
    """The client stopped reading: the walk ends."""


class _Writer:
    """A text sink that hands full chunks to the queue (waiting while it is full)."""

    def __init__(self, out: queue.Queue[object], stop: threading.Event) -> None:
        self.out, self.stop = out, stop
        self.parts: list[str] = []
        self.size = 0

    def write(self, text: str) -> int:
        if self.stop.is_set():
            raise _Gone
        self.parts.append(text)
        self.size += len(text)
        if self.size >= CHUNK_CHARS:
            self.flush()
        return len(text)

    def flush(self) -> None:
        if self.parts:
            chunk = "".join(self.parts).encode()
            self.parts, self.size = [], 0
            self.hand_over(chunk)

    def hand_over(self, item: object) -> None:
        """Put ``item`` in the queue once the client has room for it; _Gone when the client
        stopped reading, or read nothing for ``IDLE_S``."""
        waited = 0.0
        while not self.stop.is_set() and waited < IDLE_S:
            try:
                self.out.put(item, timeout=0.5)
                return
            except queue.Full:
                waited += 0.5
        raise _Gone


def export_response(svc: MemoryService, download: bool = False) -> StreamingResponse:
    """``GET /v1/export`` (and the dashboard's download): the JSON Lines export, streamed.
    Called on a worker thread (a sync route): it waits for the first chunk."""
    chunks: queue.Queue[object] = queue.Queue(maxsize=CHUNKS)
    stop = threading.Event()

    def walk() -> None:
        writer = _Writer(chunks, stop)
        try:
            export_jsonl(svc, writer)  # type: ignore[arg-type]
            writer.flush()
            writer.hand_over(_DONE)
        except _Gone:
            pass  # the client stopped reading
        except BaseException as exc:  # the client's stream breaks off, as a truncated file
            with contextlib.suppress(_Gone):
                writer.hand_over(exc)
        finally:
            _walkers.release()

    _walkers.acquire()
    threading.Thread(target=walk, name="memoryd-export", daemon=True).start()
    # the first chunk before the answer starts: a store that cannot be read (damaged, a
    # scope refused) is the API's error, not a 200 that breaks off
    first = chunks.get()
    if isinstance(first, BaseException):
        raise first

    async def body() -> AsyncIterator[bytes]:
        item = first
        try:
            while item is not _DONE:
                if isinstance(item, BaseException):
                    raise item
                assert isinstance(item, bytes)
                yield item
                item = await anyio.to_thread.run_sync(chunks.get)
        finally:
            stop.set()  # finished, failed or abandoned: the walk ends at its next line

    headers = {}
    if download:
        stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
        headers["Content-Disposition"] = f'attachment; filename="memoryd-{stamp}.jsonl"'
    return StreamingResponse(body(), media_type=NDJSON, headers=headers)
