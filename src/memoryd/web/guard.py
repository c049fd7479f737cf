"""What every request passes before a route sees it: size, media type, identity.

Pure ASGI, so it runs before FastAPI reads or validates the body: an
unauthenticated caller learns nothing about the routes' schemas, and an
oversized body is refused before it is read into memory. Looking up a key
reads the database, so it runs in a worker thread: nothing that may wait on
SQLite runs on the event loop, where it would hold up every other request
(``/health`` included). A public path has no key to look up and goes on at
once: a thread would make ``/health`` wait for one behind a busy server's
searches. A body that stops arriving is timed out.
"""

from __future__ import annotations

import hmac
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import anyio
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import Headers
from starlette.requests import HTTPConnection
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from memoryd.errors import ForbiddenError, MemorydError, UnauthorizedError
from memoryd.models import Tenant
from memoryd.tenancy.tenants import Tenants
from memoryd.web.errors import ErrorFormat, error_response
from memoryd.web.json_body import json_problem, read_body, replay
from memoryd.web.session import COOKIE, UPLOAD_PATH, is_dashboard_path

# /metrics checks the admin key itself (open when none is set)
PUBLIC_PATHS = frozenset(
    (
        "/health",
        "/metrics",
        "/openapi.json",
        "/docs",
        "/docs/oauth2-redirect",
        "/redoc",
        "/favicon.ico",
    )
)
# Swagger UI's scripts and styles, served by the app itself (public like /docs)
DOCS_ASSETS = "/docs/assets"
TENANTS_PATH = "/v1/tenants"
# bodies that are not JSON: multipart uploads and JSON Lines imports
NON_JSON_PATHS = ("/v1/imports", "/v1/files", "/v1/import")
# file uploads may be as large as the import limit, plus the multipart envelope
UPLOAD_PATHS = ("/v1/imports", "/v1/files", UPLOAD_PATH)
MULTIPART_SLACK_BYTES = 1024 * 1024
BODY_METHODS = frozenset(("POST", "PUT", "PATCH"))


@dataclass
class GuardOptions:
    tenants: Tenants
    max_body_bytes: int
    open_tenants: bool
    max_upload_bytes: int = 0  # bodies of UPLOAD_PATHS; 0: max_body_bytes
    admin_key: str = ""
    no_auth_tenant: str | None = None  # every request acts as this tenant (loopback only)
    body_timeout_s: float = 30.0  # the longest wait for the next part of a request body
    # paths that speak another API (the memory proxy's): its error format, for a request;
    # such a path also takes the key as ``Authorization: Bearer``, as that API's SDKs send it
    foreign_api: Callable[[str, Headers], ErrorFormat | None] | None = None


class _TooLarge(BaseException):
    """Raised from ``receive``; a BaseException so body parsing cannot turn it into a 400."""


class _TooSlow(BaseException):
    """Raised from ``receive`` when the body stops arriving; a BaseException for the same reason."""


class Guard:
    def __init__(self, app: ASGIApp, options: GuardOptions) -> None:
        self.app = app
        self.options = options

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        foreign = self.options.foreign_api
        render = (foreign(scope["path"], headers) if foreign else None) or error_response
        try:
            self._check_body_headers(scope, headers)
            tenant = (
                None
                if _public(scope["path"])
                else await run_in_threadpool(
                    self._identify, scope, headers, render is not error_response
                )
            )
            scope.setdefault("state", {})["tenant"] = tenant
        except MemorydError as exc:
            await render(exc.http_status, exc.code, exc.message)(scope, receive, send)
            return
        except _BodyRefused as refused:
            await render(refused.status, refused.code, refused.message)(scope, receive, send)
            return
        started = False
        seen = 0
        body_done = False
        limit = self._limit(scope)

        async def limited_receive() -> Message:
            nonlocal seen, body_done
            if body_done:  # after the body, receive waits for the client to go: no limit
                return await receive()
            try:
                with anyio.fail_after(self.options.body_timeout_s):
                    message = await receive()
            except TimeoutError:
                raise _TooSlow from None
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    raise _TooLarge
                body_done = not message.get("more_body", False)
            return message

        async def tracking_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            onward: Receive = limited_receive
            if self._json_body(scope, headers):  # depth and encoding, once for every route
                body = await read_body(limited_receive)
                bad = json_problem(body)
                if bad is not None:
                    status, problem = bad
                    await render(status, "validation_error", problem)(scope, receive, send)
                    return
                onward = replay(body, limited_receive)
            await self.app(scope, onward, tracking_send)
        except _TooLarge:
            if started:
                raise
            await render(413, "payload_too_large", self._too_large(limit))(scope, receive, send)
        except _TooSlow:
            if started:
                raise
            await render(
                408,
                "request_timeout",
                f"the request body stopped arriving for {self.options.body_timeout_s:g} s",
            )(scope, receive, send)

    def _limit(self, scope: Scope) -> int:
        upload = scope["method"] == "POST" and scope["path"] in UPLOAD_PATHS
        if upload and self.options.max_upload_bytes:
            return self.options.max_upload_bytes + MULTIPART_SLACK_BYTES
        return self.options.max_body_bytes

    @staticmethod
    def _too_large(limit: int) -> str:
        return f"the request body is larger than {limit} bytes"

    def _check_body_headers(self, scope: Scope, headers: Headers) -> None:
        if scope["method"] not in BODY_METHODS:
            return
        length = headers.get("content-length")
        limit = self._limit(scope)
        if length is not None and length.isdigit() and int(length) > limit:
            raise _BodyRefused(413, "payload_too_large", self._too_large(limit))
        if length == "0" or scope["path"].startswith(NON_JSON_PATHS):
            return
        if is_dashboard_path(scope["path"]):
            return  # the dashboard's forms (its own routes parse them)
        kind = headers.get("content-type", "").split(";")[0].strip().lower()
        if kind and kind != "application/json" and not kind.endswith("+json"):
            raise _BodyRefused(
                415,
                "unsupported_media_type",
                f"expected a JSON body (Content-Type: application/json), got {kind}",
            )

    @staticmethod
    def _json_body(scope: Scope, headers: Headers) -> bool:
        """A body the routes read as JSON (the media type was checked already)."""
        path = scope["path"]
        return (
            scope["method"] in BODY_METHODS
            and headers.get("content-length") != "0"
            and not path.startswith(NON_JSON_PATHS)
            and not is_dashboard_path(path)
        )

    def _identify(self, scope: Scope, headers: Headers, bearer: bool = False) -> Tenant | None:
        path = scope["path"]
        if path == TENANTS_PATH and scope["method"] == "POST":
            self._may_create_tenants(headers.get("x-api-key"))
            return None
        if self.options.no_auth_tenant is not None:
            tenant = self.options.tenants.store.get_tenant(self.options.no_auth_tenant)
            assert tenant is not None
            return tenant
        if is_dashboard_path(path):
            return self._dashboard_viewer(scope, headers)
        secret = headers.get("x-api-key")
        if not secret and bearer:
            scheme, _, token = headers.get("authorization", "").partition(" ")
            if scheme.lower() == "bearer" and token.strip():
                secret = token.strip()
            else:
                raise UnauthorizedError(
                    "missing API key: send your memoryd key as Authorization: Bearer or X-API-Key"
                )
        tenant, key = self.options.tenants.authenticate(secret)
        self.options.tenants.note_use(key)
        return tenant

    def _dashboard_viewer(self, scope: Scope, headers: Headers) -> Tenant | None:
        """The signed-in tenant of a dashboard page, or None: the page sends the
        browser to sign in (a missing or revoked key is not an error there)."""
        key = headers.get("x-api-key") or HTTPConnection(scope).cookies.get(COOKIE)
        if not key:
            return None
        try:
            tenant, api_key = self.options.tenants.authenticate(key)
        except UnauthorizedError:
            return None
        self.options.tenants.note_use(api_key)
        return tenant

    def _may_create_tenants(self, key: str | None) -> None:
        """Open on loopback by default; elsewhere only with the admin key."""
        if self.options.open_tenants or self.options.no_auth_tenant is not None:
            return
        admin = self.options.admin_key
        if key and admin and hmac.compare_digest(key.encode(), admin.encode()):
            return
        if not key:
            raise UnauthorizedError(
                "tenant creation on this server needs the admin key in X-API-Key"
            )
        try:
            self.options.tenants.authenticate(key)
        except UnauthorizedError:
            raise UnauthorizedError("invalid admin key") from None
        raise ForbiddenError("only the admin key may create tenants on this server")


def _public(path: str) -> bool:
    """A path anyone may read: no key to look up, so no thread to wait for."""
    return path in PUBLIC_PATHS or path.startswith(DOCS_ASSETS + "/")


class _BodyRefused(Exception):
    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


def tenant_of(state: Any) -> Tenant:
    tenant = getattr(state, "tenant", None)
    if tenant is None:
        raise UnauthorizedError("missing X-API-Key header")
    assert isinstance(tenant, Tenant)
    return tenant
