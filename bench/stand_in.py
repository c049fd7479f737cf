"""An ASGI app on a free loopback port, in a thread of this process: the scripted
stand-ins of the benches (an LLM, a chat upstream) and the tests' servers."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Literal

import uvicorn

START_TIMEOUT_S = 10
STOP_TIMEOUT_S = 10


@contextmanager
def in_thread(
    app: Any,
    *,
    lifespan: Literal["auto", "on", "off"] = "auto",
    log_level: str = "warning",
    timeout_s: float = START_TIMEOUT_S,
) -> Iterator[str]:
    """The app's base URL (``http://127.0.0.1:PORT``) once it answers; stopped and joined
    on exit, each within ``timeout_s``.

    The server thread is joined, not left to die with the interpreter: a daemon thread
    still inside its event loop while Python finalises can crash the process after its
    work is done, which reads as a failed run.
    """
    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level=log_level, lifespan=lifespan)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + timeout_s
        while not server.started:
            if time.monotonic() > deadline or not thread.is_alive():
                raise RuntimeError("the server in a thread did not start")
            time.sleep(0.02)
        port = server.servers[0].sockets[0].getsockname()[1]
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout_s)


@contextmanager
def serving(app: Any) -> Iterator[str]:
    """A scripted OpenAI-compatible stand-in: its base URL, ending in ``/v1``."""
    with in_thread(app, timeout_s=STOP_TIMEOUT_S) as url:
        yield f"{url}/v1"
