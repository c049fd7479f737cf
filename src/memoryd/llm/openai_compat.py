"""Chat with any OpenAI-compatible endpoint (OpenAI, Ollama, vLLM, LM Studio, OpenRouter, …).

The official ``openai`` SDK speaks to all of them; what differs is how much of
the API they honour. ``response_format`` is the usual gap: some servers
ignore it (the JSON repair copes), others refuse the request outright. The
client then stops sending it, for this call and every later one, rather
than failing every extraction against a server that will never accept it.

The SDK is imported lazily, as by the embedder: it costs most of a second
and an offline memoryd never needs it.
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING, Any, cast

from memoryd.errors import ValidationError
from memoryd.extras import extra
from memoryd.llm.client import ChatResult, LLMClient, LLMError, Message

if TYPE_CHECKING:
    from openai import OpenAIError
    from openai.types.chat import ChatCompletion, ChatCompletionMessageParam

DEFAULT_TIMEOUT_S = 60.0
# Extraction and reconciliation want the most likely answer, not a creative one.
DEFAULT_TEMPERATURE = 0.0
# The API key most local servers accept: the SDK refuses to start with none.
PLACEHOLDER_API_KEY = "not-needed"
JSON_OBJECT = {"type": "json_object"}
MAX_DETAIL_CHARS = 300

log = logging.getLogger(__name__)


class OpenAICompatibleLLM(LLMClient):
    """Chat completions over the OpenAI wire protocol.

    The SDK's own retries are off (``max_retries=0``): a down or slow LLM
    must fail within ``timeout_s``, not several times that, because the
    caller degrades to rules rather than waiting.
    """

    def __init__(
        self,
        model: str,
        base_url: str,
        api_key: str = "",
        *,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        json_mode: bool = True,
        temperature: float = DEFAULT_TEMPERATURE,
        max_tokens: int | None = None,
    ) -> None:
        with extra("llm", "an LLM"):
            from openai import OpenAI

        if not model:
            raise ValidationError("MEMORYD_LLM_MODEL is required to use an LLM")
        if not base_url:
            raise ValidationError("MEMORYD_LLM_BASE_URL is required to use an LLM")
        self._client = OpenAI(
            base_url=base_url,
            api_key=api_key or PLACEHOLDER_API_KEY,
            timeout=timeout_s,
            max_retries=0,
        )
        self.name = f"openai:{model}"
        self.model = model
        self.base_url = base_url
        self.timeout_s = timeout_s
        self.temperature = temperature
        self.max_tokens = max_tokens
        self._send_response_format = json_mode
        self._format_confirmed = False  # a server accepted response_format once
        self._lock = threading.Lock()

    @property
    def sends_response_format(self) -> bool:
        """Whether JSON-mode calls still send ``response_format``."""
        return self._send_response_format

    def chat(self, messages: list[Message], *, json_mode: bool) -> ChatResult:
        from openai import BadRequestError, OpenAIError, UnprocessableEntityError

        with_format = json_mode and self._send_response_format
        try:
            try:
                response = self._create(messages, with_format)
            except (BadRequestError, UnprocessableEntityError) as exc:
                if not (with_format and self._rejects_response_format(exc)):
                    raise
                self._stop_sending_response_format(exc)
                response = self._create(messages, with_format=False)
        except OpenAIError as exc:
            raise self._error(exc) from exc
        except ValueError as exc:  # a 200 whose body is not JSON: a proxy page, a broken server
            raise LLMError(f"{self.name} answered with a body that is not JSON: {exc}") from exc
        if with_format and self._send_response_format:
            self._format_confirmed = True
        return _result(response)

    def _create(self, messages: list[Message], with_format: bool) -> ChatCompletion:
        options: dict[str, Any] = {"temperature": self.temperature}
        if self.max_tokens is not None:  # some servers refuse an explicit null
            options["max_tokens"] = self.max_tokens
        if with_format:
            options["response_format"] = JSON_OBJECT
        response: ChatCompletion = self._client.chat.completions.create(
            model=self.model, messages=cast("list[ChatCompletionMessageParam]", messages), **options
        )
        return response

    def _rejects_response_format(self, exc: OpenAIError) -> bool:
        """A 400/422 that names response_format, or any before the server accepted it once.

        Servers word the refusal differently ("Unsupported parameter",
        "Extra inputs are not permitted", "unknown field"), some without
        naming the field; a request that differs from a working one only by
        the format is the safer clue.
        """
        return "response_format" in str(exc) or not self._format_confirmed

    def _stop_sending_response_format(self, exc: OpenAIError) -> None:
        with self._lock:
            if self._send_response_format:
                log.warning(
                    "%s refused response_format (%s); asking for JSON in the prompt only",
                    self.name,
                    _short(str(exc)),
                )
            self._send_response_format = False

    def _error(self, exc: OpenAIError) -> LLMError:
        """An LLMError that says what happened in words an operator can act on."""
        from openai import APIConnectionError, APIStatusError, APITimeoutError

        if isinstance(exc, APITimeoutError):
            return LLMError(f"{self.name} gave no answer within {self.timeout_s:g} s")
        if isinstance(exc, APIConnectionError):
            return LLMError(f"cannot reach {self.name} at {self.base_url}: {_short(str(exc))}")
        if isinstance(exc, APIStatusError):
            return LLMError(f"{self.name} answered HTTP {exc.status_code}: {_short(exc.message)}")
        return LLMError(f"{self.name}: {_short(str(exc))}")


def _result(response: ChatCompletion) -> ChatResult:
    """The first choice's text (or refusal) and the token counts, zero when not reported.

    Read with ``getattr``: the SDK does not validate answers, and local
    servers leave out fields the OpenAI schema calls required.
    """
    choices = getattr(response, "choices", None)
    if not choices:
        raise LLMError(f"the LLM answered without a choice: {_short(repr(response))}")
    choice = choices[0]
    message = getattr(choice, "message", None)
    content = getattr(message, "content", None)
    text = content if isinstance(content, str) else (getattr(message, "refusal", None) or "")
    usage = getattr(response, "usage", None)
    return ChatResult(
        text=text,
        prompt_tokens=getattr(usage, "prompt_tokens", 0) or 0,
        completion_tokens=getattr(usage, "completion_tokens", 0) or 0,
        finish_reason=getattr(choice, "finish_reason", None),
    )


def _short(text: str) -> str:
    return text if len(text) <= MAX_DETAIL_CHARS else text[:MAX_DETAIL_CHARS] + "…"
