"""The test server: uvicorn on a free loopback port, in a thread of the test process."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
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
PROCESS_START_TIMEOUT_S = 90


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


def memoryd_command(home: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "memoryd.cli", "--home", str(home), *args]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def wait_healthy(url: str, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + PROCESS_START_TIMEOUT_S
    while time.monotonic() < deadline:
        assert process.poll() is None, process.stdout.read() if process.stdout else ""
        try:
            if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise AssertionError("memoryd serve did not answer /health")


def spawn_server(home: Path, *args: str) -> tuple[subprocess.Popen[str], str]:
    """``memoryd serve`` as a real process on a free loopback port, once it answers."""
    port = free_port()
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    process = subprocess.Popen(
        memoryd_command(home, "serve", "--port", str(port), *args),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )
    url = f"http://127.0.0.1:{port}"
    wait_healthy(url, process)
    return process, url


def stop_process(process: subprocess.Popen[str]) -> str:
    """Ctrl-C, as a person stops it; returns everything it printed."""
    process.send_signal(signal.SIGINT)
    output, _ = process.communicate(timeout=30)
    return output
