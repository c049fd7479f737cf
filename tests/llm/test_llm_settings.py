"""Settings choose the LLM: none by default, any OpenAI-compatible endpoint when configured."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel
from scripted_llm import ScriptedLLM

from memoryd.config import load_settings
from memoryd.errors import ValidationError
from memoryd.llm import OpenAICompatibleLLM, create_llm

MODEL = "scripted-model"
PROMPT = [{"role": "user", "content": "I like tea."}]
GOOD = '{"facts": [{"text": "likes tea"}]}'


class Facts(BaseModel):
    facts: list[dict[str, str]]


def test_no_llm_is_configured_by_default(home: Path) -> None:
    assert create_llm(load_settings(home)) is None
    assert create_llm(load_settings(home, llm_model="llama3")) is None
    assert create_llm(load_settings(home, llm_base_url="http://127.0.0.1:1/v1")) is None


def test_settings_configure_the_llm(
    scripted_llm: ScriptedLLM, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMORYD_LLM_BASE_URL", scripted_llm.url)
    monkeypatch.setenv("MEMORYD_LLM_MODEL", "qwen2.5:7b")
    monkeypatch.setenv("MEMORYD_LLM_API_KEY", "sk-from-env")
    monkeypatch.setenv("MEMORYD_LLM_TIMEOUT_S", "7.5")
    monkeypatch.setenv("MEMORYD_LLM_JSON_MODE", "false")
    llm = create_llm(load_settings(home))
    assert isinstance(llm, OpenAICompatibleLLM)
    assert (llm.name, llm.timeout_s, llm.sends_response_format) == ("openai:qwen2.5:7b", 7.5, False)
    scripted_llm.script(GOOD)
    llm.complete_json(PROMPT, Facts)
    (request,) = scripted_llm.chat_requests
    assert request.headers["authorization"] == "Bearer sk-from-env"
    assert request.body["model"] == "qwen2.5:7b"


def test_settings_in_the_config_file(scripted_llm: ScriptedLLM, home: Path) -> None:
    home.mkdir(parents=True)
    (home / "config.toml").write_text(f'llm_base_url = "{scripted_llm.url}"\nllm_model = "m"\n')
    llm = create_llm(load_settings(home))
    assert llm is not None and llm.name == "openai:m"


def test_a_model_and_base_url_are_required() -> None:
    with pytest.raises(ValidationError, match="MEMORYD_LLM_MODEL"):
        OpenAICompatibleLLM("", "http://127.0.0.1:1/v1")
    with pytest.raises(ValidationError, match="MEMORYD_LLM_BASE_URL"):
        OpenAICompatibleLLM(MODEL, "")


def test_a_non_positive_timeout_is_refused(home: Path) -> None:
    with pytest.raises(ValidationError, match="llm_timeout_s"):
        load_settings(home, llm_timeout_s=0)
