"""Fixtures: a context engine over a real service in a temporary home."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from memoryd.context import ContextConfig, ContextEngine
from memoryd.service import MemoryService

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "llm"))  # scripted_llm


@pytest.fixture
def engine(service: MemoryService) -> ContextEngine:
    return ContextEngine(service)


@pytest.fixture
def quiet_engine(service: MemoryService) -> Iterator[ContextEngine]:
    """No long-term memory writes: the DAG alone, fast."""
    yield ContextEngine(
        service, replace(ContextConfig(), remember_turns=False, remember_summaries=False)
    )
