"""Scripted HTTP stand-ins (an LLM, a chat upstream): a Starlette app served by uvicorn
in a thread of the bench process, on a free loopback port."""

from __future__ import annotations

import threading
import time

import uvicorn
from starlette.applications import Starlette

START_TIMEOUT_S = 10


def serve_app(app: Starlette) -> tuple[str, uvicorn.Server]:
    """The app's base URL (ending in ``/v1``) and its server, once it answers."""
    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + START_TIMEOUT_S
    while not server.started:
        if time.monotonic() > deadline:
            raise RuntimeError("the scripted stand-in did not start")
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    return f"http://127.0.0.1:{port}/v1", server
