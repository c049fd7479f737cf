"""The browser boundary: no web page reads or writes a memoryd it was not allowed to.

A memoryd on the user's machine is reachable by every page the user's
browser opens. Memories are what an agent reads before it acts, so a page
that could search them could spy on the agent and one that could write them
could steer it. Three checks, before anything else runs:

* **Host** (loopback servers): the ``Host`` header must name this machine
  (``localhost``, ``127.0.0.1``, ``[::1]``, the bound address, or a name in
  ``MEMORYD_ALLOWED_HOSTS``). A page that re-points its own domain name at
  127.0.0.1 (DNS rebinding) sends its own name, and is refused.
* **Origin**: a request that a page's script sends carries the page's
  ``Origin``. Only the server's own origin and those listed in
  ``MEMORYD_CORS_ORIGINS`` (empty by default) pass; any other origin is
  refused on every route, whatever the method or the key, so a page can
  neither read (with ``--no-auth``) nor write, nor create a tenant.
* **Fetch metadata**: a cross-site request without an allowed origin
  (an image or a script tag pointing at the API) is refused as well; a
  person following a link to the server still gets the page.

CORS answers (``Access-Control-Allow-Origin``) are given to the listed
origins only, by Starlette's ``CORSMiddleware`` inside this one.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from memoryd.errors import ValidationError
from memoryd.web.errors import error_response
from memoryd.web.options import is_loopback

LOOPBACK_NAMES = frozenset(("localhost", "127.0.0.1", "::1"))
DEFAULT_PORTS = {"http": 80, "https": 443}
# what a person following a link sends; its answer goes to them, not to the linking page
NAVIGATION_METHODS = frozenset(("GET", "HEAD"))


def normalise_origin(value: str) -> str:
    """``scheme://host[:port]`` in lower case, the default port left out; else ValueError."""
    parts = urlsplit(value.strip())
    if parts.scheme not in DEFAULT_PORTS or not parts.hostname:
        raise ValueError(f"not a web origin: {value!r} (expected http(s)://host[:port])")
    if parts.path not in ("", "/") or parts.query or parts.fragment or parts.username:
        raise ValueError(f"an origin is scheme://host[:port] only, got {value!r}")
    host = parts.hostname.lower()
    host = f"[{host}]" if ":" in host else host
    port = parts.port
    return f"{parts.scheme}://{host}" + (
        "" if port in (None, DEFAULT_PORTS[parts.scheme]) else f":{port}"
    )


def check_origins(values: list[str]) -> list[str]:
    """The configured origins, normalised; a wildcard is refused (it is the hole this closes)."""
    out = []
    for value in values:
        if value.strip() == "*":
            raise ValidationError(
                "MEMORYD_CORS_ORIGINS cannot be '*': any web page could then read and change "
                "memories; list the origins that may (e.g. http://localhost:3000)"
            )
        try:
            out.append(normalise_origin(value))
        except ValueError as exc:
            raise ValidationError(f"MEMORYD_CORS_ORIGINS: {exc}") from None
    return out


def host_name(header: str) -> str:
    """The name in a ``Host`` header: without the port, the brackets of IPv6, a final dot."""
    header = header.strip().lower()
    if header.startswith("["):
        return header[1 : header.find("]")] if "]" in header else header[1:]
    return header.rsplit(":", 1)[0].rstrip(".") if ":" in header else header.rstrip(".")


@dataclass(frozen=True)
class BrowserPolicy:
    allowed_origins: frozenset[str]
    allowed_hosts: frozenset[str] | None  # None: any Host (a network server without a list)

    @classmethod
    def for_server(cls, bind_host: str, origins: list[str], hosts: list[str]) -> BrowserPolicy:
        named = {host_name(h) for h in hosts if h.strip()}
        if is_loopback(bind_host):
            allowed: frozenset[str] | None = frozenset(
                {*LOOPBACK_NAMES, host_name(bind_host), *named}
            )
        else:
            allowed = frozenset({*LOOPBACK_NAMES, *named}) if named else None
        return cls(frozenset(check_origins(origins)), allowed)


class BrowserGuard:
    def __init__(self, app: ASGIApp, policy: BrowserPolicy) -> None:
        self.app = app
        self.policy = policy

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            refusal = self._refusal(scope, Headers(scope=scope))
            if refusal is not None:
                status, code, message = refusal
                await error_response(status, code, message)(scope, receive, send)
                return
        await self.app(scope, receive, send)

    def _refusal(self, scope: Scope, headers: Headers) -> tuple[int, str, str] | None:
        host = headers.get("host")
        allowed_hosts = self.policy.allowed_hosts
        if host is not None and allowed_hosts is not None and host_name(host) not in allowed_hosts:
            return (
                400,
                "invalid_host",
                f"this server does not answer to the host name {host_name(host)!r}; add it to "
                "MEMORYD_ALLOWED_HOSTS if it is really this machine",
            )
        origin = headers.get("origin")
        if origin is not None and not self._allowed(origin, scope, host):
            return (
                403,
                "origin_not_allowed",
                f"requests from the web page origin {origin!r} are refused: web pages may not "
                "read or change memories; allow an origin with MEMORYD_CORS_ORIGINS",
            )
        site = headers.get("sec-fetch-site", "").lower()
        navigation = (
            headers.get("sec-fetch-mode", "").lower() == "navigate"
            and scope["method"] in NAVIGATION_METHODS
        )
        if origin is None and site in ("cross-site", "same-site") and not navigation:
            return (
                403,
                "origin_not_allowed",
                "a request another web site made the browser send is refused",
            )
        return None

    def _allowed(self, origin: str, scope: Scope, host: str | None) -> bool:
        try:
            normal = normalise_origin(origin)
        except ValueError:  # "null" (sandboxed frames, files) and anything else unreadable
            return False
        if normal in self.policy.allowed_origins:
            return True
        if host is None:
            return False
        try:  # the server's own pages (the docs) call it from its own origin
            return normal == normalise_origin(f"{scope.get('scheme', 'http')}://{host}")
        except ValueError:
            return False
