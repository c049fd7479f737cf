"""The proxy's request path: recall, inject, forward, relay, then hand the exchange on.

Nothing here waits on SQLite on the event loop (recall runs in a worker
thread, remembering in the extractor's own), and nothing is buffered: a
streamed answer is relayed chunk by chunk as the upstream sends it, and a
client that goes away cancels the upstream call. What the upstream answers
(status, body, error) is what the client gets.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import AsyncIterator, Mapping
from typing import Any

import anyio
import httpx
from pydantic import ValidationError as PydanticValidationError
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from memoryd.errors import MemorydError, ValidationError
from memoryd.models import Tenant
from memoryd.proxy.egress import join
from memoryd.proxy.extract import Exchange, Extractor
from memoryd.proxy.recall import recall_block
from memoryd.proxy.settings import MemorySettings, TenantSettings, Upstream
from memoryd.proxy.wire import ANTHROPIC, OPENAI, Dialect, SSEReader
from memoryd.service import MemoryService

log = logging.getLogger("memoryd.proxy")

SESSION_HEADERS = ("x-session-id", "x-memoryd-session-id")
# never sent on: the client's memoryd key, this hop's framing, what httpx sets itself
REQUEST_DROP = frozenset(
    (
        "host",
        "content-length",
        "authorization",
        "x-api-key",
        "accept-encoding",
        "connection",
        "keep-alive",
        "transfer-encoding",
        "te",
        "trailer",
        "upgrade",
        "proxy-authorization",
        "proxy-connection",
        "cookie",
        *SESSION_HEADERS,
    )
)
RESPONSE_DROP = frozenset(
    ("content-length", "transfer-encoding", "connection", "keep-alive", "date", "server")
)
EVENT_STREAM = "text/event-stream"


def dialect_for(path: str, headers: Headers) -> Dialect | None:
    """The API a path speaks (``/v1/models`` is Anthropic's when the client says so)."""
    if path == "/v1/chat/completions":
        return OPENAI
    if path == "/v1/messages":
        return ANTHROPIC
    if path == "/v1/models":
        return ANTHROPIC if "anthropic-version" in headers else OPENAI
    return None


def session_of(headers: Headers, body: Mapping[str, Any]) -> str | None:
    """The session a client names: a header, OpenAI's ``user``, Anthropic's metadata."""
    for name in SESSION_HEADERS:
        if value := headers.get(name, "").strip():
            return value
    user = body.get("user")
    if isinstance(user, str) and user.strip():
        return user.strip()
    metadata = body.get("metadata")
    if isinstance(metadata, dict) and isinstance(metadata.get("user_id"), str):
        return str(metadata["user_id"]).strip() or None
    return None


def conversation_id(messages: list[tuple[str, str]]) -> str:
    """A stable session id for a conversation that names none: its first user message.

    A client resends the whole conversation each time: the same first
    message is the same conversation, so a turn already stored is not stored
    twice (the session log keeps one copy of each message).
    """
    first = next((text for role, text in messages if role == "user"), "")
    return "proxy-" + hashlib.sha256(first.encode()).hexdigest()[:16]


def new_user_messages(messages: list[tuple[str, str]]) -> tuple[str, ...]:
    """What the user said since the last answer: the new part of a resent conversation."""
    last_answer = max(
        (i for i, (role, _) in enumerate(messages) if role == "assistant"), default=-1
    )
    return tuple(text for role, text in messages[last_answer + 1 :] if role == "user")


class Proxy:
    """The memory proxy of one server: its upstream client, settings and extractor."""

    def __init__(self, root: MemoryService) -> None:
        self.root = root
        self.settings = TenantSettings(root.store, root.settings)
        config = root.settings
        self.default_upstream = None
        if config.upstream_url:
            try:
                self.default_upstream = Upstream(
                    url=config.upstream_url, api_key=config.upstream_api_key
                )
            except PydanticValidationError:
                raise ValidationError(
                    f"MEMORYD_UPSTREAM_URL must start with http:// or https://, "
                    f"got {config.upstream_url[:100]!r}"
                ) from None
        self.extractor = Extractor(config)
        self.client = httpx.AsyncClient(
            timeout=httpx.Timeout(
                config.upstream_timeout_s, connect=config.upstream_connect_timeout_s
            ),
            limits=httpx.Limits(max_connections=None, max_keepalive_connections=100),
            follow_redirects=False,  # a redirect goes back to the client, never followed here
        )

    async def aclose(self) -> None:
        await self.client.aclose()
        await anyio.to_thread.run_sync(self.extractor.close)

    # ------------------------------------------------------------------ upstreams
    def upstream_for(self, settings: MemorySettings, model: str) -> Upstream | None:
        """The tenant's mapping for the model, else the server's default upstream."""
        return settings.upstream_for(model) or self.default_upstream

    # ------------------------------------------------------------------ chat
    async def chat(self, request: Request, dialect: Dialect, tenant: Tenant) -> Response:
        """Recall, inject, forward; memoryd's own failures in the format of the API called."""
        try:
            return await self._chat(request, dialect, tenant)
        except MemorydError as exc:
            if exc.http_status == 500:
                log.error("%s %s failed: %s", request.method, request.url.path, exc.message)
                return dialect.error(500, exc.code, f"{exc.prefix}: memoryd failed; see its log")
            return dialect.error(exc.http_status, exc.code, exc.message)

    async def _chat(self, request: Request, dialect: Dialect, tenant: Tenant) -> Response:
        raw = await request.body()
        try:
            body = json.loads(raw)
        except ValueError as exc:
            return dialect.error(400, "invalid_json", f"the request body is not valid JSON: {exc}")
        if not isinstance(body, dict):
            return dialect.error(400, "invalid_request", "the request body must be a JSON object")
        model = body.get("model")
        if not isinstance(model, str) or not model.strip():
            return dialect.error(400, "invalid_request", "'model' is required (a string)")
        # read from the cache on the loop: a thread hop per request waits behind busy threads
        settings = self.settings.cached(tenant.id)
        if settings is None:
            settings = await run_in_threadpool(self.settings.get, tenant.id)
        upstream = self.upstream_for(settings, model)
        if upstream is None:
            return dialect.error(
                404,
                "model_not_found",
                f"no upstream serves the model {model!r}: set MEMORYD_UPSTREAM_URL, or map "
                "the model to an upstream in PUT /api/settings/memory",
            )
        svc = self.root.for_tenant(tenant.id)
        named_session = session_of(request.headers, body)
        messages = dialect.messages(body)
        exchange = None
        content = raw  # memory off, or nothing recalled: the client's bytes as they came
        if settings.enabled:
            # a named session narrows recall to it; else the conversation in progress (known
            # by its first message) is left out: its turns are in the request already
            ongoing = None if named_session else conversation_id(messages)
            block = await run_in_threadpool(
                recall_block, svc, settings, messages, named_session, ongoing
            )
            if block:
                content = json.dumps(
                    dialect.inject(body, block, model, settings), ensure_ascii=False
                ).encode()
            exchange = Exchange(
                tenant.id,
                new_user_messages(messages),
                named_session or conversation_id(messages),
                model,
            )
        headers = {k: v for k, v in request.headers.items() if k.lower() not in REQUEST_DROP}
        headers.update(dialect.upstream_headers(upstream.api_key))
        headers["accept-encoding"] = "identity"  # relayed as it comes: nothing to re-encode
        if upstream is self.default_upstream:  # the operator's own choice
            base = httpx.URL(upstream.url)
        else:
            try:
                base = await self.settings.egress.admit(upstream.url)
            except MemorydError as exc:
                self._remember(exchange, None)  # the user's words are kept all the same
                return dialect.error(exc.http_status, "upstream_not_allowed", exc.message)
        return await self._forward(
            dialect, str(join(base, dialect.path)), content, headers, exchange
        )

    async def _forward(
        self,
        dialect: Dialect,
        url: str,
        content: bytes,
        headers: dict[str, str],
        exchange: Exchange | None,
    ) -> Response:
        outgoing = self.client.build_request("POST", url, content=content, headers=headers)
        try:
            answer = await self.client.send(outgoing, stream=True)
        except BaseException as exc:
            self._remember(exchange, None)  # the user's words are kept whatever the upstream did
            if isinstance(exc, httpx.TimeoutException):
                return dialect.error(504, "upstream_timeout", f"the upstream timed out ({url})")
            if isinstance(exc, httpx.HTTPError):
                return dialect.error(
                    502, "upstream_unreachable", f"the upstream could not be reached ({url}): {exc}"
                )
            raise
        relayed = {k: v for k, v in answer.headers.items() if k.lower() not in RESPONSE_DROP}
        kind = answer.headers.get("content-type", "")
        if not kind.startswith(EVENT_STREAM):
            try:
                data = b"".join([chunk async for chunk in answer.aiter_raw()])
            except BaseException:
                self._remember(exchange, None)
                raise
            finally:
                await answer.aclose()
            self._remember(exchange, _whole_answer(dialect, answer, data))
            return Response(data, status_code=answer.status_code, headers=relayed)
        return StreamingResponse(
            self._relay(dialect, answer, exchange),
            status_code=answer.status_code,
            headers=relayed,
        )

    async def _relay(
        self, dialect: Dialect, answer: httpx.Response, exchange: Exchange | None
    ) -> AsyncIterator[bytes]:
        """The upstream's chunks as they arrive; the answer's text is read on the side."""
        reader = SSEReader()
        text: list[str] = []
        complete = False
        try:
            async for chunk in answer.aiter_raw():
                if exchange is not None and answer.is_success:
                    text.extend(dialect.delta_text(event) for event in reader.feed(chunk))
                yield chunk
            complete = True
        except httpx.HTTPError as exc:
            # the client's stream breaks off as the upstream's did: it sees the same failure
            log.warning("the upstream stream broke off (%s): %s", answer.url, exc)
            raise
        finally:
            with anyio.CancelScope(shield=True):  # a client gone: the upstream call ends too
                await answer.aclose()
            self._remember(exchange, "".join(text) if complete and answer.is_success else None)

    def _remember(self, exchange: Exchange | None, answer: str | None) -> None:
        if exchange is not None:
            self.extractor.submit(exchange, answer)

    # ------------------------------------------------------------------ models
    async def models(self, request: Request, dialect: Dialect) -> Response:
        """The default upstream's model list, as it answers."""
        upstream = self.default_upstream
        if upstream is None:
            return dialect.error(
                404, "no_upstream", "no default upstream is configured (MEMORYD_UPSTREAM_URL)"
            )
        headers = {k: v for k, v in request.headers.items() if k.lower() not in REQUEST_DROP}
        headers.update(dialect.upstream_headers(upstream.api_key))
        headers["accept-encoding"] = "identity"
        url = str(join(httpx.URL(upstream.url), "/models"))
        try:
            answer = await self.client.get(url, headers=headers, params=request.query_params)
        except httpx.TimeoutException:
            return dialect.error(504, "upstream_timeout", f"the upstream timed out ({url})")
        except httpx.HTTPError as exc:
            return dialect.error(
                502, "upstream_unreachable", f"the upstream could not be reached ({url}): {exc}"
            )
        # answer.content is decoded: whatever encoding the upstream used is not relayed
        relayed = {
            k: v
            for k, v in answer.headers.items()
            if k.lower() not in RESPONSE_DROP and k.lower() != "content-encoding"
        }
        return Response(answer.content, status_code=answer.status_code, headers=relayed)


def _whole_answer(dialect: Dialect, answer: httpx.Response, data: bytes) -> str | None:
    """The text of a successful, unencoded JSON answer; None for anything else."""
    if not answer.is_success or answer.headers.get("content-encoding", "identity") != "identity":
        return None
    try:
        return dialect.answer_text(json.loads(data))
    except ValueError:
        return None
