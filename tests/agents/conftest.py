"""Fixtures for the agent layer: managers on temporary homes sharing the loaded model."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from memoryd.agents import MemoryManager
from memoryd.embed.local import LocalEmbedder

# the server harness and the scripted LLM live beside their own tests
sys.path.insert(0, str(Path(__file__).parents[1] / "server"))
sys.path.insert(0, str(Path(__file__).parents[1] / "llm"))

LLM_ENV = ("MEMORYD_LLM_BASE_URL", "MEMORYD_LLM_API_KEY", "MEMORYD_LLM_MODEL")


@pytest.fixture(autouse=True)
def no_llm_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Offline unless a test gives an LLM itself, whatever the shell has set."""
    for name in LLM_ENV:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def managers(home: Path, embedder: LocalEmbedder) -> Iterator[Callable[..., MemoryManager]]:
    """Open managers on the test's home; those left open are shut down after the test."""
    opened: list[MemoryManager] = []

    def make(profile: str | None = None, **options: Any) -> MemoryManager:
        options.setdefault("embedder", embedder)
        manager = MemoryManager(profile, home=home, **options)
        opened.append(manager)
        return manager

    yield make
    for manager in opened:
        manager.shutdown()
