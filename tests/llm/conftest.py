"""Fixtures for LLM tests: the scripted server, and no proxy between it and the client."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from scripted_llm import ScriptedLLM

LLM_ENV = (
    "MEMORYD_LLM_BASE_URL",
    "MEMORYD_LLM_API_KEY",
    "MEMORYD_LLM_MODEL",
    "MEMORYD_LLM_TIMEOUT_S",
    "MEMORYD_LLM_JSON_MODE",
)


@pytest.fixture(autouse=True)
def no_llm_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests configure the LLM themselves, whatever the shell running them has set."""
    for name in LLM_ENV:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def scripted_llm() -> Iterator[ScriptedLLM]:
    """A fresh scripted OpenAI-compatible server, stopped after the test."""
    with ScriptedLLM() as server:
        yield server
