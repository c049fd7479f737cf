"""The test server: uvicorn on a free loopback port, in a thread of the test process."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from bench.stand_in import in_thread
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
    running = ExitStack()
    url = running.enter_context(in_thread(app, lifespan="on", timeout_s=START_TIMEOUT_S))

    def stop() -> None:
        running.close()
        service.close()

    return RunningServer(url, service, home), stop


def module_server(folder: str) -> Any:
    """A module-scoped ``server`` fixture: an offline server on a fresh home in ``folder``.

    Each test module that needs a plain server assigns it (``server =
    module_server("…")``); tests keep apart by tenants of their own.
    """

    @pytest.fixture(scope="module")
    def server(
        tmp_path_factory: pytest.TempPathFactory, embedder: LocalEmbedder
    ) -> Iterator[RunningServer]:
        running, stop = start_server(tmp_path_factory.mktemp(folder) / "home", embedder)
        yield running
        stop()

    return server


def create_tenant(server: RunningServer, name: str) -> tuple[str, str]:
    """(tenant id, API key), made through the server's own ``POST /v1/tenants``."""
    with server.client() as anonymous:
        response = anonymous.post("/v1/tenants", json={"name": name})
    assert response.status_code == 200, response.text
    body = response.json()
    return body["id"], body["api_key"]


@dataclass
class TenantClient:
    id: str
    key: str
    http: httpx.Client


@pytest.fixture
def make_tenant(server: RunningServer) -> Iterator[Callable[..., TenantClient]]:
    """Create tenants through ``POST /v1/tenants``, each with an authenticated client.

    A conftest that wants it imports it (``from server_harness import make_tenant as
    make_tenant``) beside its ``server``.
    """
    made: list[TenantClient] = []

    def make(name: str = "") -> TenantClient:
        tenant_id, key = create_tenant(server, name)
        made.append(TenantClient(tenant_id, key, server.client(key)))
        return made[-1]

    yield make
    for tenant in made:
        tenant.http.close()


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


def spawn_server(
    home: Path, *args: str, env: dict[str, str] | None = None
) -> tuple[subprocess.Popen[str], str]:
    """``memoryd serve`` as a real process on a free loopback port, once it answers."""
    port = free_port()
    env = {**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})}
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


def ingest_and_wait(
    t: TenantClient, messages: list[dict[str, str]], session_id: str, timeout_s: float = 60.0
) -> dict[str, Any]:
    """``POST /v1/memories`` with ``messages`` (202), then its task once completed."""
    accepted = t.http.post("/v1/memories", json={"messages": messages, "session_id": session_id})
    assert accepted.status_code == 202, accepted.text
    task_id = accepted.json()["task_id"]
    return completed_task(lambda: t.http.get(f"/v1/tasks/{task_id}").json(), timeout_s)


def completed_task(fetch: Callable[[], dict[str, Any]], timeout_s: float = 60.0) -> dict[str, Any]:
    """Poll ``fetch`` (a task's JSON) until it is done; it must have completed."""
    deadline = time.monotonic() + timeout_s
    while (task := fetch())["status"] not in ("completed", "failed"):
        assert time.monotonic() < deadline, task
        time.sleep(0.05)
    assert task["status"] == "completed", task
    return task


def accept_invitation(tenant: TenantClient, space_id: str) -> dict[str, Any]:
    """``tenant`` says yes to the space it was invited to (nobody joins one without it)."""
    response = tenant.http.post(f"/v1/invitations/{quote(space_id, safe='')}/accept")
    assert response.status_code == 200, response.text
    space: dict[str, Any] = response.json()
    return space
