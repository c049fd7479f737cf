"""A scripted chat upstream that speaks both OpenAI's and Anthropic's APIs, streamed or not.

The sibling of :mod:`scripted_llm` (the one stand-in the project allows),
for what sits behind the memory proxy: ``POST /v1/chat/completions`` and
``POST /v1/messages``, as whole answers or as Server-Sent Events in the
providers' own event shapes, and ``GET /v1/models``. Every request is
recorded with its exact body bytes. A streamed reply can hold after its
first chunk until the test opens ``gate`` (to see that chunks reach the
client before the upstream finishes), pause between chunks, or drop the
connection mid-stream; ``aborted`` is set when a client went away before
the stream ended.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from scripted_llm import CHAT_PATH, Recorded, Reply, ScriptedLLM

MESSAGES_PATH = "/v1/messages"
MODELS_PATH = "/v1/models"
GATE_TIMEOUT_S = 20.0
TEXT_BLOCK = {"type": "text", "text": ""}
MODELS = {"object": "list", "data": [{"id": "scripted-1", "object": "model", "owned_by": "me"}]}


@dataclass
class StreamReply(Reply):
    """A streamed answer: ``content`` sent in ``chunks`` pieces (words by default)."""

    chunks: list[str] | None = None
    chunk_delay_s: float = 0.0
    hold_after_first: bool = False  # wait for ``gate`` after the first chunk
    drop_after: int | None = None  # close the connection after this many chunks


@dataclass
class Captured(Recorded):
    raw: bytes = b""
    method: str = "POST"
    query: str = ""


@dataclass
class Stats:
    finished: int = 0  # streams sent to their end
    aborted: threading.Event = field(default_factory=threading.Event)

    def finished_after(self, count: int, timeout_s: float = 5.0) -> int:
        """The streams finished, once ``count`` have or ``timeout_s`` has passed: a stream
        counts after its chunked body's end is written, a moment after a client that stops
        at the last event has stopped reading."""
        deadline = time.monotonic() + timeout_s
        while self.finished < count and time.monotonic() < deadline:
            time.sleep(0.01)
        return self.finished


class ScriptedUpstream(ScriptedLLM):
    """The upstream; ``url`` is its base URL (ends in ``/v1``)."""

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.stats = Stats()
        super().__init__()

    @property
    def chats(self) -> list[Captured]:
        return [r for r in self.requests if r.path.partition("?")[0] in (CHAT_PATH, MESSAGES_PATH)]

    def next_reply(self, request: Recorded) -> Reply | None:
        with self._lock:
            reply: Reply | str | None = self._script.popleft() if self._script else None
        if reply is None and self.responder is not None:
            reply = self.responder(request)
        return Reply(content=reply) if isinstance(reply, str) else reply

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # chunked streams: a dropped one is seen as dropped

            def do_GET(self) -> None:
                path, _, query = self.path.partition("?")
                request = Captured(path, self._headers(), {}, b"", "GET", query)
                server.requests.append(request)
                if path == MODELS_PATH:
                    self._send(200, json.dumps(MODELS).encode())
                else:
                    self._send(404, _openai_error(f"no route {path}"))

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else {}
                except ValueError:
                    body = {"unparsed": raw.decode("utf-8", "replace")}
                request = Captured(self.path, self._headers(), body, raw)
                with server._lock:
                    server.requests.append(request)
                route = self.path.partition("?")[0]  # Claude Code asks /v1/messages?beta=true
                anthropic = route == MESSAGES_PATH
                if route not in (CHAT_PATH, MESSAGES_PATH):
                    self._send(404, _openai_error(f"no route {self.path}"))
                    return
                reply = server.next_reply(request)
                if reply is None:
                    reply = Reply(status=500, error="the script has no answer left")
                if reply.delay_s and server._stopping.wait(reply.delay_s):
                    return
                model = str(body.get("model", "scripted"))
                if reply.status >= 400:
                    error = _anthropic_error if anthropic else _openai_error
                    self._send(reply.status, error(reply.error))
                elif body.get("stream"):
                    events = _anthropic_events if anthropic else _openai_events
                    self._stream(reply, events(reply, model))
                else:
                    whole = _anthropic_message if anthropic else _openai_completion
                    self._send(200, json.dumps(whole(reply, model)).encode())

            def _headers(self) -> dict[str, str]:
                return {k.lower(): v for k, v in self.headers.items()}

            def _send(self, status: int, payload: bytes) -> None:
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.send_header("X-Scripted", "yes")
                    self.end_headers()
                    self.wfile.write(payload)
                except OSError:
                    pass

            def _stream(self, reply: Reply, events: list[bytes]) -> None:
                stream = reply if isinstance(reply, StreamReply) else StreamReply()
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "text/event-stream")
                    self.send_header("Transfer-Encoding", "chunked")
                    self.send_header("X-Scripted", "yes")
                    self.end_headers()
                    for i, event in enumerate(events):
                        if stream.drop_after is not None and i >= stream.drop_after:
                            self.close_connection = True
                            self.wfile.flush()
                            self.connection.shutdown(2)  # mid-stream, no final chunk
                            return
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(event), event))
                        self.wfile.flush()
                        if i == 0 and stream.hold_after_first:
                            server.gate.wait(GATE_TIMEOUT_S)
                        elif stream.chunk_delay_s and server._stopping.wait(stream.chunk_delay_s):
                            return
                    self.wfile.write(b"0\r\n\r\n")
                    self.wfile.flush()
                    server.stats.finished += 1
                except OSError:
                    server.stats.aborted.set()
                    self.close_connection = True

            def log_message(self, format: str, *args: Any) -> None:
                pass

        return Handler


def _pieces(reply: Reply) -> list[str]:
    if isinstance(reply, StreamReply) and reply.chunks is not None:
        return reply.chunks
    words = (reply.content or "").split(" ")
    return [w if i == 0 else " " + w for i, w in enumerate(words)]


def _sse(data: Any, event: str | None = None) -> bytes:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(data)}\n\n".encode()


def _openai_events(reply: Reply, model: str) -> list[bytes]:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        return _sse(
            {
                "id": "chatcmpl-scripted",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }
        )

    pieces = _pieces(reply)
    events = [chunk({"role": "assistant", "content": pieces[0] if pieces else ""})]
    events += [chunk({"content": p}) for p in pieces[1:]]
    events.append(chunk({}, reply.finish_reason))
    events.append(b"data: [DONE]\n\n")
    return events


def _anthropic_events(reply: Reply, model: str) -> list[bytes]:
    start = {
        "type": "message_start",
        "message": {
            "id": "msg_scripted",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": reply.prompt_tokens, "output_tokens": 0},
        },
    }
    events = [
        _sse(start, "message_start"),
        _sse(
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
            "content_block_start",
        ),
    ]
    for piece in _pieces(reply):
        delta = {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "text_delta", "text": piece},
        }
        events.append(_sse(delta, "content_block_delta"))
    events.append(_sse({"type": "content_block_stop", "index": 0}, "content_block_stop"))
    events.append(
        _sse(
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                "usage": {"output_tokens": reply.completion_tokens},
            },
            "message_delta",
        )
    )
    events.append(_sse({"type": "message_stop"}, "message_stop"))
    return events


def _openai_completion(reply: Reply, model: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": reply.content, "refusal": None},
                "finish_reason": reply.finish_reason,
            }
        ],
        "usage": {
            "prompt_tokens": reply.prompt_tokens,
            "completion_tokens": reply.completion_tokens,
            "total_tokens": reply.prompt_tokens + reply.completion_tokens,
        },
    }


def _anthropic_message(reply: Reply, model: str) -> dict[str, Any]:
    return {
        "id": "msg_scripted",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": reply.content or ""}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": reply.prompt_tokens, "output_tokens": reply.completion_tokens},
    }


def _openai_error(message: str) -> bytes:
    error = {"message": message, "type": "server_error", "param": None, "code": None}
    return json.dumps({"error": error}).encode()


def _anthropic_error(message: str) -> bytes:
    return json.dumps(
        {"type": "error", "error": {"type": "api_error", "message": message}}
    ).encode()
