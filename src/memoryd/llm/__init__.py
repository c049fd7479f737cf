"""LLM providers behind one small base class; none is configured by default.

memoryd works offline without an LLM: :func:`create_llm` answers ``None``
then, and smart ingest falls back to rules.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memoryd.config import Settings
from memoryd.llm.client import ChatResult, LLMClient, LLMError, Message, Usage, parse_answer
from memoryd.llm.json_repair import extract_json, strip_thinking

if TYPE_CHECKING:
    from memoryd.llm.openai_compat import OpenAICompatibleLLM

__all__ = [
    "ChatResult",
    "LLMClient",
    "LLMError",
    "Message",
    "OpenAICompatibleLLM",
    "Usage",
    "create_llm",
    "extract_json",
    "parse_answer",
    "strip_thinking",
]


def create_llm(settings: Settings) -> LLMClient | None:
    """The LLM the settings name, or ``None`` when no base URL or no model is set."""
    if not settings.llm_base_url or not settings.llm_model:
        return None
    from memoryd.llm.openai_compat import OpenAICompatibleLLM

    return OpenAICompatibleLLM(
        model=settings.llm_model,
        base_url=settings.llm_base_url,
        api_key=settings.llm_api_key,
        timeout_s=settings.llm_timeout_s,
        json_mode=settings.llm_json_mode,
    )


def __getattr__(name: str) -> object:
    """``OpenAICompatibleLLM`` on first use: importing the openai SDK costs most of a second."""
    if name == "OpenAICompatibleLLM":
        from memoryd.llm.openai_compat import OpenAICompatibleLLM

        return OpenAICompatibleLLM
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
