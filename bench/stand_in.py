"""Scripted HTTP stand-ins (an LLM, a chat upstream): a Starlette app served by uvicorn
in a thread of the bench process, on a free loopback port."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import uvicorn
from starlette.applications import Starlette

START_TIMEOUT_S = 10
STOP_TIMEOUT_S = 10


@contextmanager
def serving(app: Starlette) -> Iterator[str]:
    """The app's base URL (ending in ``/v1``) once it answers; stopped and joined on exit.

    The server thread is joined, not left to die with the interpreter: a daemon thread
    still inside its event loop while Python finalises can crash the process after the
    report is written, which reads as a failed run.
    """
    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while not server.started:
            if time.monotonic() > deadline or not thread.is_alive():
                raise RuntimeError("the scripted stand-in did not start")
            time.sleep(0.02)
        port = server.servers[0].sockets[0].getsockname()[1]
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        server.should_exit = True
        thread.join(STOP_TIMEOUT_S)
