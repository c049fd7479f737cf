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
PROXY_VARS = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")


@pytest.fixture(autouse=True)
def no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    """httpx honours proxy variables; the scripted server is on loopback."""
    for name in PROXY_VARS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")


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
