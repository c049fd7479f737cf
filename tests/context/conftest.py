"""Fixtures: a context engine over a real service in a temporary home."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from memoryd.context import ContextConfig, ContextEngine
from memoryd.service import MemoryService

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "llm"))  # scripted_llm
LOCOMO = Path(__file__).resolve().parents[3] / "shared" / "data" / "locomo_dev.json"


@pytest.fixture
def engine(service: MemoryService) -> ContextEngine:
    return ContextEngine(service)


@pytest.fixture
def quiet_engine(service: MemoryService) -> Iterator[ContextEngine]:
    """No long-term memory writes: the DAG alone, fast."""
    yield ContextEngine(
        service, replace(ContextConfig(), remember_turns=False, remember_summaries=False)
    )


def locomo_turns(limit: int | None = None) -> list[dict[str, Any]]:
    """The first development conversation of LoCoMo as messages, dated by session."""
    import json
    from datetime import datetime

    data = json.loads(LOCOMO.read_text(encoding="utf-8"))
    conv = data[0]["conversation"]
    out: list[dict[str, Any]] = []
    n = 1
    while f"session_{n}" in conv:
        when = datetime.strptime(conv[f"session_{n}_date_time"], "%I:%M %p on %d %B, %Y")
        for turn in conv[f"session_{n}"]:
            out.append(
                {
                    "id": turn["dia_id"],
                    "role": turn["speaker"],
                    "content": turn["text"],
                    "created_at": when.isoformat() + "Z",
                }
            )
        n += 1
    return out[:limit] if limit else out
