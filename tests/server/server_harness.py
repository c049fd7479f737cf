"""The test server: uvicorn on a free loopback port, in a thread of the test process."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import httpx
import uvicorn

from memoryd.config import load_settings
from memoryd.embed.local import LocalEmbedder
from memoryd.server import ServeOptions, create_app
from memoryd.service import MemoryService

START_TIMEOUT_S = 30


@dataclass
class RunningServer:
    url: str
    service: MemoryService
    home: Path

    def client(self, key: str | None = None, **headers: str) -> httpx.Client:
        if key is not None:
            headers["X-API-Key"] = key
        return httpx.Client(base_url=self.url, headers=headers, timeout=30)


def start_server(
    home: Path, embedder: LocalEmbedder, options: ServeOptions | None = None, **settings: object
) -> tuple[RunningServer, Callable[[], None]]:
    """uvicorn in a thread of this process, on a free loopback port; returns (server, stop)."""
    service = MemoryService(settings=load_settings(home, **settings), embedder=embedder)
    app = create_app(options=options, service=service)
    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="on")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + START_TIMEOUT_S
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the test server did not start")
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]

    def stop() -> None:
        server.should_exit = True
        thread.join(timeout=START_TIMEOUT_S)
        service.close()

    return RunningServer(f"http://127.0.0.1:{port}", service, home), stop


@dataclass
class TenantClient:
    id: str
    key: str
    http: httpx.Client
