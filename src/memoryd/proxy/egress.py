"""Where the server may send a request a tenant chose: the operator's allow-list.

A tenant maps models to upstreams of its own (``PUT /api/settings/memory``),
and the proxy then POSTs the tenant's request there and hands the answer
back. Unchecked, that is request forgery: a URL naming the server itself,
another service on its network or a cloud metadata address would make the
server call it on the tenant's behalf. So a tenant's upstream is a parsed
URL, never a string to append to (no user info, query or fragment), and it
goes only where the operator's allow-list (``MEMORYD_UPSTREAM_ALLOW``) says:

* ``public`` (the default): any host whose every address is a public one:
  never loopback, private, link-local (cloud metadata included), shared,
  reserved or multicast, whatever form the address is written in (decimal,
  IPv4-mapped IPv6) or the name that resolves to it;
* an origin, ``http://10.0.0.7:11434``: that scheme, host and port, private
  or not (a model server on the operator's own network);
* a host pattern, ``https://*.openai.azure.com``: hosts matching it, on
  public addresses only.

The check runs when the settings are written and again, with a fresh name
lookup, before each request, so a name that later resolves to a private
address is refused then. The proxy's client follows no redirect. The
server's own default upstream (``MEMORYD_UPSTREAM_URL``) is the operator's
choice and is not checked.
"""

from __future__ import annotations

import fnmatch
import ipaddress
import socket
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import anyio
import httpx

from memoryd.errors import ForbiddenError, ValidationError

PUBLIC = "public"
DEFAULT_ALLOW = (PUBLIC,)
_DEFAULT_PORTS = {"http": 80, "https": 443}


def parse_upstream(url: str) -> httpx.URL:
    """A base URL a request may be sent to: http(s), a host, no user info, query or
    fragment (a ``?`` would turn the path memoryd appends into a query string)."""
    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL as exc:
        raise ValidationError(f"an upstream url is not a URL: {exc}") from None
    if parsed.scheme not in _DEFAULT_PORTS:
        raise ValidationError("an upstream url starts with http:// or https://")
    if not parsed.host:
        raise ValidationError("an upstream url names a host")
    if parsed.userinfo:
        raise ValidationError("an upstream url carries no user or password: use apiKey")
    if "?" in url or "#" in url:
        raise ValidationError("an upstream url has no query or fragment")
    return parsed


@dataclass(frozen=True)
class _Entry:
    scheme: str
    host: str  # a name, an address, or a pattern with *
    port: int | None  # None: any port (a pattern) or the scheme's default

    def origin_matches(self, url: httpx.URL) -> bool:
        """Exactly this origin: the operator named it, private or not."""
        return (
            "*" not in self.host
            and url.scheme == self.scheme
            and url.host == self.host
            and _port(url) == (self.port or _DEFAULT_PORTS[self.scheme])
        )

    def pattern_matches(self, url: httpx.URL) -> bool:
        return (
            "*" in self.host
            and url.scheme == self.scheme
            and fnmatch.fnmatchcase(url.host, self.host)
            and (self.port is None or _port(url) == self.port)
        )


def _port(url: httpx.URL) -> int:
    return url.port or _DEFAULT_PORTS[url.scheme]


class Egress:
    """The operator's allow-list for upstreams a tenant sets."""

    def __init__(self, allow: Sequence[str] = DEFAULT_ALLOW) -> None:
        self.public = False
        self.entries: list[_Entry] = []
        for item in allow:
            item = item.strip()
            if not item:
                continue
            if item == PUBLIC:
                self.public = True
                continue
            parsed = parse_upstream(item)
            self.entries.append(_Entry(parsed.scheme, parsed.host.lower(), parsed.port))

    def _named(self, url: httpx.URL) -> bool:
        return any(e.origin_matches(url) for e in self.entries)

    def _public_allowed(self, url: httpx.URL) -> bool:
        return self.public or any(e.pattern_matches(url) for e in self.entries)

    def check(self, url: str) -> httpx.URL:
        """The URL parsed, when the allow-list lets a tenant set it; else a clear error.
        A name is looked up (a blocking call: settings are written on a worker thread)."""
        parsed = parse_upstream(url)
        if self._named(parsed):
            return parsed
        if not self._public_allowed(parsed):
            raise ForbiddenError(
                f"the upstream {parsed.scheme}://{parsed.host} is not in this server's "
                "allow-list (MEMORYD_UPSTREAM_ALLOW)"
            )
        literal = _literal(parsed.host)
        if literal is not None and not _is_public(literal):
            raise ForbiddenError(_private(parsed.host))
        if literal is None:  # a name: refused now if it names a private address now
            try:
                found = socket.getaddrinfo(parsed.host, _port(parsed), type=socket.SOCK_STREAM)
            except OSError:  # not resolvable from here yet: judged when it is used
                found = []
            _refuse_private(parsed.host, found)
        return parsed

    async def admit(self, url: str) -> httpx.URL:
        """:meth:`check`, then every address the host resolves to now is public (unless
        the operator named the origin): the moment before the request is sent."""
        parsed = self.check(url)
        if self._named(parsed):
            return parsed
        try:
            found = await anyio.getaddrinfo(parsed.host, _port(parsed), type=socket.SOCK_STREAM)
        except OSError as exc:
            problem = f"the upstream host {parsed.host} does not resolve: {exc}"
            raise ForbiddenError(problem) from None
        _refuse_private(parsed.host, found)
        return parsed


def _refuse_private(host: str, found: Sequence[tuple[Any, ...]]) -> None:
    for *_, sockaddr in found:
        if not _is_public(ipaddress.ip_address(sockaddr[0])):
            raise ForbiddenError(_private(host))


def _literal(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The address a host names by itself, in any form a resolver accepts (decimal
    ``2130706433``, hex, short ``127.1``); None for a name."""
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        pass
    try:
        return ipaddress.ip_address(socket.inet_aton(host))
    except OSError:
        return None


def _is_public(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    if isinstance(address, ipaddress.IPv6Address):
        mapped = address.ipv4_mapped or address.sixtofour
        if mapped is not None:
            return _is_public(mapped)
    return address.is_global and not address.is_multicast


def _private(host: str) -> str:
    return (
        f"the upstream host {host} is not a public address; the operator may allow it "
        "by its origin in MEMORYD_UPSTREAM_ALLOW"
    )


def join(base: httpx.URL, path: str) -> httpx.URL:
    """``base`` with ``path`` appended to its path: built from parts, never concatenated."""
    return base.copy_with(path=base.path.rstrip("/") + path)
