"""What keeps another site from using the dashboard through the user's browser.

Two things, beside the Host and Origin checks every request passes
(:mod:`memoryd.web.browser`):

* **No framing, a strict policy.** Every dashboard response says no page may
  frame it (``frame-ancestors 'none'`` and ``X-Frame-Options: DENY``): a page
  on another origin, or on another port of 127.0.0.1 (the same *site*, so the
  ``SameSite=Strict`` cookie is sent), could otherwise show a signed-in page
  under its own and turn one click into a deletion. Scripts come from the
  dashboard's own files only; no type is sniffed; no other site is told which
  page linked to it.
* **A form token bound to the session.** Every form the dashboard serves
  carries ``csrf``, an HMAC of the session (the signed-in key, or a random
  cookie before signing in and on a server without keys); a POST without the
  token of its own session is a 403, whatever cookie came with it. A request
  with ``X-API-Key`` (no browser sends one across sites) needs none.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

from fastapi import Request
from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from memoryd.errors import ForbiddenError
from memoryd.web.session import COOKIE, FORM_COOKIE, is_dashboard_path

FORM_FIELD = "csrf"
_PURPOSE = b"memoryd dashboard form"
POLICY = "; ".join(
    (
        "default-src 'self'",
        "script-src 'self'",
        # the charts' widths and colours are inline style attributes
        "style-src 'self' 'unsafe-inline'",
        "img-src 'self' data:",
        "connect-src 'self'",
        "form-action 'self'",
        "frame-ancestors 'none'",
        "base-uri 'none'",
        "object-src 'none'",
    )
)
HEADERS = {
    "content-security-policy": POLICY,
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
    "referrer-policy": "same-origin",
}


class SecurityHeaders:
    """Adds :data:`HEADERS` to every response on a dashboard path, errors included."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not is_dashboard_path(scope["path"]):
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in HEADERS.items():
                    headers[name] = value
            await send(message)

        await self.app(scope, receive, with_headers)


def _session(request: Request) -> str:
    return request.cookies.get(COOKIE) or request.cookies.get(FORM_COOKIE) or ""


def _token(session: str) -> str:
    return hmac.new(session.encode(), _PURPOSE, hashlib.sha256).hexdigest()


def form_token(request: Request) -> tuple[str, str | None]:
    """The token for the forms of a page, and a new session cookie to set when the
    browser has none yet (before signing in, or on a server without keys)."""
    session = _session(request)
    if session:
        return _token(session), None
    fresh = secrets.token_urlsafe(32)
    return _token(fresh), fresh


async def check_form(request: Request) -> None:
    """A dependency of every dashboard route: a POST carries its session's token."""
    if request.method != "POST" or request.headers.get("x-api-key"):
        return
    session = _session(request)
    sent = (await request.form()).get(FORM_FIELD)
    if not session or not isinstance(sent, str) or not hmac.compare_digest(sent, _token(session)):
        raise ForbiddenError(
            "this form is not from this dashboard session: reload the page and send it again"
        )
