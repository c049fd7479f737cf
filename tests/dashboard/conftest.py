"""Fixtures: a real memoryd server on a loopback port and headless Chromium from the system."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, sync_playwright

from memoryd.embed.local import LocalEmbedder

sys.path.insert(0, str(Path(__file__).parents[1] / "server"))
from server_harness import RunningServer, start_server

# what a browser needs on a machine with no display and no outside network
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def chromium_path() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    raise RuntimeError("no Chromium on PATH: `make test` installs Debian's chromium package")


@pytest.fixture(scope="module")
def server(
    tmp_path_factory: pytest.TempPathFactory, embedder: LocalEmbedder
) -> Iterator[RunningServer]:
    running, stop = start_server(tmp_path_factory.mktemp("dashboard") / "home", embedder)
    yield running
    stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_FLAGS)
        yield launched
        launched.close()
