"""The LLM seam: one small base class, one module per provider.

The LLM only ever makes memoryd smarter: extraction and reconciliation work
without one, so every failure here is an :class:`LLMError` the caller turns
into a degraded task (rules instead of the model), never into lost data.
:meth:`LLMClient.complete_json` is the one way the rest of memoryd asks for
structured output: it asks for JSON, mends what local models break
(:mod:`memoryd.llm.json_repair`), validates with pydantic and gives the
model one chance to correct itself, quoting the error.
"""

from __future__ import annotations

import json
import logging
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TypeVar

from pydantic import BaseModel
from pydantic import ValidationError as PydanticValidationError

from memoryd.errors import MemorydError
from memoryd.llm.json_repair import extract_json

# One first answer and one correction: a model that fails twice on the same
# prompt rarely succeeds on the third, and each try costs a full call.
MAX_ATTEMPTS = 2
# Validation problems quoted back to the model; more only dilutes the message.
MAX_QUOTED_ERRORS = 8
MAX_ERROR_CHARS = 2000
RETRY_PROMPT = (
    "Your previous answer could not be used: {error}\n"
    "Answer again with only a JSON value (no prose, no code fence) that matches "
    "this JSON schema:\n{schema}"
)

T = TypeVar("T", bound=BaseModel)
Message = dict[str, str]

log = logging.getLogger(__name__)


class LLMError(MemorydError):
    """The LLM was unreachable, too slow, or gave no usable answer."""

    code = "llm_error"
    prefix = "llm error"
    http_status = 502


@dataclass(frozen=True)
class ChatResult:
    """One chat completion: the answer's text and what it cost."""

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    finish_reason: str | None = None  # "length" means the answer was cut off


TRUNCATED = "length"  # the finish_reason of an answer cut off at the token limit


@dataclass
class Usage:
    """What the LLM cost one task, so the task can record it.

    ``calls`` counts requests, answered or not; ``failures`` counts those
    that gave nothing usable: a transport error, or an answer that could
    not be parsed or validated (so one ``complete_json`` may add a failure
    and still succeed).
    """

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    failures: int = 0
    truncated: int = 0  # answers the model stopped at its token limit

    def record(self, result: ChatResult) -> None:
        self.calls += 1
        self.prompt_tokens += result.prompt_tokens
        self.completion_tokens += result.completion_tokens
        if result.finish_reason == TRUNCATED:
            self.truncated += 1

    def add(self, other: Usage) -> None:
        """Fold another task's usage into this one (a job totalling its batches)."""
        self.calls += other.calls
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.failures += other.failures
        self.truncated += other.truncated

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def as_dict(self) -> dict[str, int]:
        return {
            "calls": self.calls,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "failures": self.failures,
            "truncated": self.truncated,
        }


class LLMClient(ABC):
    """A chat model. ``name`` identifies it in logs, errors and task records."""

    name: str

    @abstractmethod
    def chat(self, messages: list[Message], *, json_mode: bool) -> ChatResult:
        """One chat completion; ``json_mode`` asks for a JSON answer where supported.

        Raises :class:`LLMError` for every transport or server failure.
        """

    def complete_json(
        self, messages: list[Message], schema: type[T], *, usage: Usage | None = None
    ) -> T:
        """The model's answer as a validated ``schema``; one retry quoting the error.

        ``usage``, when given, accumulates calls, tokens and failures. A
        transport failure (down, timeout, server error) is not retried: the
        next attempt would most likely wait just as long for the same result.
        """
        conversation = list(messages)
        error = ""
        for attempt in range(1, MAX_ATTEMPTS + 1):
            try:
                result = self.chat(conversation, json_mode=True)
            except LLMError:
                if usage is not None:
                    usage.calls += 1
                    usage.failures += 1
                raise
            if usage is not None:
                usage.record(result)
            try:
                return parse_answer(result.text, schema)
            except ValueError as exc:
                error = str(exc)
            if usage is not None:
                usage.failures += 1
            log.info(
                "%s: attempt %d gave no valid %s: %s", self.name, attempt, schema.__name__, error
            )
            conversation += [
                {"role": "assistant", "content": result.text},
                {"role": "user", "content": retry_prompt(error, schema)},
            ]
        raise LLMError(
            f"{self.name} gave no valid {schema.__name__} in {MAX_ATTEMPTS} attempts; "
            f"last problem: {error}"
        )


def parse_answer(text: str, schema: type[T]) -> T:
    """``text`` as a ``schema``; ``ValueError`` with a readable reason otherwise."""
    data = extract_json(text)
    try:
        return schema.model_validate(data)
    except PydanticValidationError as exc:
        raise ValueError(describe_validation_error(exc)) from None


def describe_validation_error(exc: PydanticValidationError) -> str:
    """A short, model-readable list of what was wrong and where."""
    problems = []
    for item in exc.errors()[:MAX_QUOTED_ERRORS]:
        where = ".".join(str(p) for p in item["loc"]) or "the top level"
        problems.append(f"{where}: {item['msg']}")
    more = exc.error_count() - len(problems)
    text = "; ".join(problems) + (f"; and {more} more" if more > 0 else "")
    return f"the JSON does not match the schema ({text})"


def retry_prompt(error: str, schema: type[BaseModel]) -> str:
    """The correction request: the error, and the schema the answer must match."""
    if len(error) > MAX_ERROR_CHARS:
        error = error[:MAX_ERROR_CHARS] + "…"
    compact = json.dumps(schema.model_json_schema(), separators=(",", ":"), ensure_ascii=False)
    return RETRY_PROMPT.format(error=error, schema=compact)
