"""The two chat dialects the proxy speaks: OpenAI's and Anthropic's.

Each says where its requests go upstream, how the upstream is told the key,
where the recalled block goes in a request, where the text is in messages
and answers (whole or streamed), and what an error looks like, so the
official SDKs raise their usual exceptions (``AuthenticationError`` for a
401, ``BadRequestError`` for a 400) against memoryd as against the provider.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from starlette.responses import JSONResponse

from memoryd.proxy.settings import MemorySettings

OPENAI_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    408: "timeout",
    413: "invalid_request_error",
    415: "invalid_request_error",
    429: "rate_limit_error",
}
ANTHROPIC_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    408: "timeout_error",
    413: "request_too_large",
    415: "invalid_request_error",
    429: "rate_limit_error",
    504: "timeout_error",
}


@dataclass(frozen=True)
class Dialect:
    name: str  # "openai" | "anthropic"
    path: str  # appended to the upstream base URL (which ends in /v1)

    # ------------------------------------------------------------------ errors
    def error(self, status: int, code: str, message: str) -> JSONResponse:
        """An error in this API's own shape, which its SDK turns into its usual exception."""
        if self.name == "anthropic":
            kind = ANTHROPIC_ERROR_TYPES.get(status, "api_error")
            body: dict[str, Any] = {"type": "error", "error": {"type": kind, "message": message}}
        else:
            kind = OPENAI_ERROR_TYPES.get(status, "api_error")
            body = {"error": {"message": message, "type": kind, "param": None, "code": code}}
        return JSONResponse(body, status_code=status)

    # ------------------------------------------------------------------ upstream
    def upstream_headers(self, api_key: str) -> dict[str, str]:
        if not api_key:
            return {}
        if self.name == "anthropic":
            return {"x-api-key": api_key}
        return {"authorization": f"Bearer {api_key}"}

    # ------------------------------------------------------------------ reading
    def messages(self, body: dict[str, Any]) -> list[tuple[str, str]]:
        """(role, text) of each message, system prompts left out (they are not the user's)."""
        out: list[tuple[str, str]] = []
        for message in body.get("messages") or []:
            if not isinstance(message, dict):
                continue
            role = str(message.get("role") or "")
            if role in ("user", "assistant"):
                out.append((role, content_text(message.get("content"))))
        return out

    def answer_text(self, answer: Any) -> str:
        """The assistant's text in a whole (non-streamed) answer."""
        if not isinstance(answer, dict):
            return ""
        if self.name == "anthropic":
            return content_text(answer.get("content"))
        choices = answer.get("choices") or []
        if choices and isinstance(choices[0], dict):
            message = choices[0].get("message") or {}
            if isinstance(message, dict):
                return content_text(message.get("content"))
        return ""

    def delta_text(self, event: Any) -> str:
        """The text one streamed event adds to the answer."""
        if not isinstance(event, dict):
            return ""
        if self.name == "anthropic":
            delta = event.get("delta") if event.get("type") == "content_block_delta" else None
            if isinstance(delta, dict) and delta.get("type") == "text_delta":
                return str(delta.get("text") or "")
            return ""
        choices = event.get("choices") or []
        if choices and isinstance(choices[0], dict):
            delta = choices[0].get("delta") or {}
            if isinstance(delta, dict) and isinstance(delta.get("content"), str):
                return str(delta["content"])
        return ""

    # ------------------------------------------------------------------ injecting
    def inject(
        self, body: dict[str, Any], block: str, model: str, settings: MemorySettings
    ) -> dict[str, Any]:
        """``body`` with the recalled block where this API and model take it.

        Ahead of the client's own system prompt, so the client's instructions
        come last and win; in the first user message for a provider that
        rejects the system role; in Anthropic's ``system`` field.
        """
        body = dict(body)
        messages = list(body.get("messages") or [])
        if self.name == "anthropic":
            system = body.get("system")
            if isinstance(system, list):
                body["system"] = [{"type": "text", "text": block}, *system]
            elif isinstance(system, str) and system:
                body["system"] = f"{block}\n\n{system}"
            else:
                body["system"] = block
            return body
        if settings.rejects_system_role(model):
            for i, message in enumerate(messages):
                if isinstance(message, dict) and message.get("role") == "user":
                    messages[i] = {**message, "content": _prepend(block, message.get("content"))}
                    break
            else:
                messages.insert(0, {"role": "user", "content": block})
        else:
            messages.insert(0, {"role": "system", "content": block})
        body["messages"] = messages
        return body


OPENAI = Dialect("openai", "/chat/completions")
ANTHROPIC = Dialect("anthropic", "/messages")


def content_text(content: Any) -> str:
    """The text of a message's content: a string, or the text parts of a list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            str(p.get("text") or "")
            for p in content
            if isinstance(p, dict) and p.get("type") in ("text", "input_text")
        ]
        return "\n".join(p for p in parts if p)
    return ""


def _prepend(block: str, content: Any) -> Any:
    if isinstance(content, list):
        return [{"type": "text", "text": block}, *content]
    return f"{block}\n\n{content}" if content else block


class SSEReader:
    """The ``data:`` payloads of a Server-Sent Events stream fed in arbitrary chunks.

    Only read beside the relay, to learn the answer's text: the bytes the
    client gets are the upstream's, untouched.
    """

    def __init__(self) -> None:
        self._buffer = b""

    def feed(self, chunk: bytes) -> Iterator[Any]:
        self._buffer = (self._buffer + chunk).replace(b"\r\n", b"\n")
        while b"\n\n" in self._buffer:
            event, self._buffer = self._buffer.split(b"\n\n", 1)
            data = [
                line[5:].removeprefix(b" ")
                for line in event.split(b"\n")
                if line.startswith(b"data:")
            ]
            if not data:
                continue
            payload = b"\n".join(data)
            if payload.strip() == b"[DONE]":
                continue
            try:
                yield json.loads(payload)
            except ValueError:
                continue  # not JSON: nothing to learn from it, and the client has it as is
