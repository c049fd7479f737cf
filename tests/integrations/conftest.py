"""Fixtures for the TypeScript host plugins: the built plugins, a real ``memoryd serve``, the LLM.

The plugins are built once per run (``build_plugins.build``: npm ci when the
lock changed, then tsc). The server is a real ``memoryd serve`` process on a
loopback port; its tenant's key reaches the hosts through the environment.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "server"))
sys.path.insert(0, str(HERE.parent / "llm"))

from build_plugins import build  # noqa: E402
from server_harness import spawn_server, stop_process  # noqa: E402


@pytest.fixture(scope="session")
def plugins_built() -> None:
    build()


@dataclass
class Memoryd:
    url: str
    key: str
    http: httpx.Client
    process: subprocess.Popen[str]


@pytest.fixture(scope="module")
def memoryd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Memoryd]:
    """``memoryd serve`` as a process, and a tenant made through its API."""
    process, url = spawn_server(tmp_path_factory.mktemp("memoryd") / "home")
    try:
        answer = httpx.post(f"{url}/v1/tenants", json={"name": "plugins"}, timeout=30)
        answer.raise_for_status()
        key = answer.json()["api_key"]
        with httpx.Client(base_url=url, headers={"X-API-Key": key}, timeout=30) as http:
            yield Memoryd(url, key, http, process)
    finally:
        if process.poll() is None:
            stop_process(process)
