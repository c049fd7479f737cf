"""Fixtures for the Claude Code hooks: embedded homes, a real server, ``memoryd hook`` processes."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from memoryd.embed.local import LocalEmbedder
from memoryd.hooks.backend import EmbeddedBackend
from memoryd.hooks.config import HookConfig
from memoryd.sdk import Memory

# the server harness and the scripted LLM live beside their own tests
sys.path.insert(0, str(Path(__file__).parents[1] / "server"))
sys.path.insert(0, str(Path(__file__).parents[1] / "llm"))


@pytest.fixture
def memory(home: Path, embedder: LocalEmbedder) -> Iterator[Memory]:
    mem = Memory(home, embedder=embedder)
    yield mem
    mem.close()


@pytest.fixture
def backend(memory: Memory) -> EmbeddedBackend:
    """The embedded backend a hook opens, on the test's home, sharing the loaded model."""
    return EmbeddedBackend(memory)


@pytest.fixture
def config(home: Path) -> HookConfig:
    return HookConfig(home=home)
