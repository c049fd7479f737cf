"""A scripted OpenAI-compatible chat server: the one stand-in the project allows.

A real HTTP server on 127.0.0.1, in a thread of the test process, answers
``POST /v1/chat/completions`` in the OpenAI response shape, so the real
client (the ``openai`` SDK over httpx) runs end to end. Each request takes
the next scripted :class:`Reply` (a string is a 200 answer with that
content); when the script is used up, ``responder`` answers, if set, else
the server answers 500 so the test fails loudly. Every request is recorded.

Use it from any test folder::

    from scripted_llm import Reply, ScriptedLLM   # with tests/llm on sys.path

    with ScriptedLLM() as llm:
        llm.script('{"facts": []}', Reply(status=500))
        client = OpenAICompatibleLLM("test-model", llm.url)
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

CHAT_PATH = "/v1/chat/completions"
POLL_INTERVAL_S = 0.01
# What a server that does not know response_format answers (the vLLM/llama.cpp wording).
RESPONSE_FORMAT_REFUSAL = "Unsupported parameter: 'response_format' is not supported by this model"


@dataclass
class Reply:
    """One scripted answer.

    ``content`` None sends ``"content": null`` (with ``refusal`` when set);
    ``usage`` False leaves the usage block out, as some local servers do;
    ``raw`` is sent verbatim instead of a chat completion.
    """

    content: str | None = ""
    status: int = 200
    delay_s: float = 0.0
    prompt_tokens: int = 11
    completion_tokens: int = 7
    usage: bool = True
    finish_reason: str = "stop"
    refusal: str | None = None
    error: str = "scripted error"
    raw: bytes | None = None


@dataclass
class Recorded:
    """A request the server received; header names are lower case."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any] = field(default_factory=dict)

    @property
    def messages(self) -> list[dict[str, Any]]:
        messages: list[dict[str, Any]] = self.body.get("messages", [])
        return messages

    @property
    def response_format(self) -> Any:
        return self.body.get("response_format")


Responder = Callable[[Recorded], "Reply | str"]


class ScriptedLLM:
    """The server; ``url`` is the base URL to give the client (it ends in ``/v1``)."""

    def __init__(self, responder: Responder | None = None) -> None:
        self.requests: list[Recorded] = []
        self.responder = responder
        self.rejects_response_format = False  # answer 400 to any request that sends it
        self._script: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": POLL_INTERVAL_S}, daemon=True
        )
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def script(self, *replies: Reply | str) -> None:
        """Queue answers for the next requests, in order."""
        with self._lock:
            self._script.extend(r if isinstance(r, Reply) else Reply(content=r) for r in replies)

    @property
    def pending(self) -> int:
        """Scripted answers not yet used."""
        with self._lock:
            return len(self._script)

    @property
    def chat_requests(self) -> list[Recorded]:
        return [r for r in self.requests if r.path == CHAT_PATH]

    def stop(self) -> None:
        self._stopping.set()  # wakes delayed answers so shutdown does not wait for them
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self) -> ScriptedLLM:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def answer(self, request: Recorded) -> tuple[int, bytes, float]:
        """(status, body, delay) for a request: the refusal rule, the script, the responder."""
        if request.path != CHAT_PATH:
            return 404, _error_body(f"no route {request.path}"), 0.0
        if self.rejects_response_format and "response_format" in request.body:
            return 400, _error_body(RESPONSE_FORMAT_REFUSAL, param="response_format"), 0.0
        with self._lock:
            reply: Reply | str | None = self._script.popleft() if self._script else None
        if reply is None and self.responder is not None:
            reply = self.responder(request)
        if reply is None:
            return 500, _error_body("the script has no answer left for this request"), 0.0
        if isinstance(reply, str):
            reply = Reply(content=reply)
        return reply.status, _reply_body(reply, request), reply.delay_s

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else {}
                except ValueError:
                    body = {"unparsed": raw.decode("utf-8", "replace")}
                headers = {k.lower(): v for k, v in self.headers.items()}
                request = Recorded(self.path, headers, body)
                with server._lock:
                    server.requests.append(request)
                status, payload, delay = server.answer(request)
                if delay and server._stopping.wait(delay):
                    return
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except OSError:
                    pass  # the client gave up (a timeout test): nothing to answer

            def log_message(self, format: str, *args: Any) -> None:
                pass

        return Handler


def _reply_body(reply: Reply, request: Recorded) -> bytes:
    if reply.raw is not None:
        return reply.raw
    if reply.status >= 400:
        return _error_body(reply.error)
    completion: dict[str, Any] = {
        "id": f"chatcmpl-scripted-{len(reply.content or '')}",
        "object": "chat.completion",
        "created": 0,
        "model": request.body.get("model", "scripted"),
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": reply.content,
                    "refusal": reply.refusal,
                },
                "finish_reason": reply.finish_reason,
            }
        ],
    }
    if reply.usage:
        completion["usage"] = {
            "prompt_tokens": reply.prompt_tokens,
            "completion_tokens": reply.completion_tokens,
            "total_tokens": reply.prompt_tokens + reply.completion_tokens,
        }
    return json.dumps(completion).encode("utf-8")


def _error_body(message: str, param: str | None = None) -> bytes:
    error = {"message": message, "type": "invalid_request_error", "param": param, "code": None}
    return json.dumps({"error": error}).encode("utf-8")
