"""A tenant's upstream goes only where the operator allows: no request forgery.

A real listener on loopback stands for whatever the server could reach on
its own network (itself, a database's HTTP port, a metadata service): every
way of naming it is refused, when the settings are written and again when a
request would be sent, and the listener receives nothing. A redirect from
an allowed upstream goes back to the client; the server never follows it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from server_harness import RunningServer, start_server

from memoryd.embed.local import LocalEmbedder
from memoryd.errors import ForbiddenError, ValidationError
from memoryd.proxy.egress import Egress, join, parse_upstream
from memoryd.proxy.settings import SETTINGS_NAME


class Listener:
    """A loopback HTTP server that records every request and answers as told."""

    def __init__(self, redirect_to: str | None = None) -> None:
        self.paths: list[str] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self) -> None:
                outer.paths.append(self.path)
                length = int(self.headers.get("content-length") or 0)
                self.rfile.read(length)
                if redirect_to is not None:
                    self.send_response(307)
                    self.send_header("location", redirect_to)
                    self.send_header("content-length", "0")
                    self.end_headers()
                    return
                body = b'{"taken": true}'
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = _answer

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def bait() -> Iterator[Listener]:
    listener = Listener()
    yield listener
    listener.close()


@pytest.fixture(scope="module")
def redirector(bait: Listener) -> Iterator[Listener]:
    listener = Listener(redirect_to=f"http://127.0.0.1:{bait.port}/v1/keys")
    yield listener
    listener.close()


@pytest.fixture(scope="module")
def guarded(
    tmp_path_factory: pytest.TempPathFactory, embedder: LocalEmbedder, redirector: Listener
) -> Iterator[RunningServer]:
    """A server whose operator allows public hosts and the redirector's origin only."""
    running, stop = start_server(
        tmp_path_factory.mktemp("egress") / "home",
        embedder,
        upstream_allow=["public", f"http://127.0.0.1:{redirector.port}"],
    )
    yield running
    stop()


@pytest.fixture
def tenant(guarded: RunningServer) -> dict[str, str]:
    response = httpx.post(f"{guarded.url}/v1/tenants", json={"name": "egress"}, timeout=20)
    assert response.status_code == 200, response.text
    return dict(response.json())


@pytest.fixture
def key(tenant: dict[str, str]) -> str:
    return tenant["api_key"]


def auth(key: str) -> dict[str, str]:
    """The key as the REST API and as the chat SDKs send it."""
    return {"x-api-key": key, "authorization": f"Bearer {key}"}


def forms(port: int) -> list[str]:
    """Ways of naming this machine, its network and a metadata service."""
    return [
        f"http://127.0.0.1:{port}/v1",
        f"http://localhost:{port}/v1",
        f"http://[::1]:{port}/v1",
        f"http://[::ffff:127.0.0.1]:{port}/v1",
        f"http://2130706433:{port}/v1",  # 127.0.0.1 as one decimal number
        f"http://0x7f000001:{port}/v1",
        f"http://127.1:{port}/v1",
        f"http://0.0.0.0:{port}/v1",
        "http://169.254.169.254/latest",  # cloud metadata
        "http://10.0.0.7:8080/v1",
        "http://192.168.1.1/v1",
        "http://[fd00::1]/v1",
    ]


def test_every_form_of_a_private_address_is_refused_when_set(
    guarded: RunningServer, key: str, bait: Listener
) -> None:
    headers = auth(key)
    for url in forms(bait.port):
        body = {"upstreams": {"x-*": {"url": url}}}
        response = httpx.put(
            f"{guarded.url}/api/settings/memory", json=body, headers=headers, timeout=20
        )
        assert response.status_code == 403, (url, response.text)
        assert response.json()["error"]["code"] == "forbidden"
        assert "MEMORYD_UPSTREAM_ALLOW" in response.json()["error"]["message"]
    stored = httpx.get(f"{guarded.url}/api/settings/memory", headers=headers, timeout=20)
    assert stored.json()["upstreams"] == {}
    assert bait.paths == []


@pytest.mark.parametrize(
    "url",
    ["http://127.0.0.1:1/v1/keys?", "https://api.example.com/v1#x", "https://me:pw@example.com"],
)
def test_a_query_a_fragment_or_a_password_in_an_upstream_is_refused(
    guarded: RunningServer, key: str, url: str
) -> None:
    body = {"upstreams": {"x-*": {"url": url}}}
    response = httpx.put(
        f"{guarded.url}/api/settings/memory",
        json=body,
        headers=auth(key),
        timeout=20,
    )
    assert response.status_code == 400, response.text
    assert response.json()["error"]["code"] == "validation_error"


def test_a_stored_private_upstream_is_refused_before_the_request_is_sent(
    guarded: RunningServer, bait: Listener
) -> None:
    """Settings stored before the check (or a name that resolves elsewhere since) are
    judged again when a request would go out."""
    for url in forms(bait.port)[:8]:
        made = httpx.post(f"{guarded.url}/v1/tenants", json={"name": "old"}, timeout=20).json()
        guarded.service.store.put_tenant_setting(  # as an older version let it be stored
            made["id"], SETTINGS_NAME, {"upstreams": {"x-*": {"url": url}}}
        )
        answer = httpx.post(
            f"{guarded.url}/v1/chat/completions",
            json={"model": "x-1", "messages": [{"role": "user", "content": "hi"}]},
            headers=auth(made["api_key"]),
            timeout=20,
        )
        assert answer.status_code == 403, (url, answer.text)
        assert answer.json()["error"]["code"] == "upstream_not_allowed"
    assert bait.paths == []


def test_a_redirect_to_a_private_address_is_not_followed(
    guarded: RunningServer, key: str, bait: Listener, redirector: Listener
) -> None:
    headers = auth(key)
    body = {"upstreams": {"r-*": {"url": f"http://127.0.0.1:{redirector.port}/v1"}}}
    put = httpx.put(f"{guarded.url}/api/settings/memory", json=body, headers=headers, timeout=20)
    assert put.status_code == 200, put.text  # the operator named this origin
    answer = httpx.post(
        f"{guarded.url}/v1/chat/completions",
        json={"model": "r-1", "messages": [{"role": "user", "content": "hi"}]},
        headers=headers,
        timeout=20,
        follow_redirects=False,
    )
    assert answer.status_code == 307  # relayed to the client as it came
    assert redirector.paths == ["/v1/chat/completions"]  # the path appended, no query
    assert bait.paths == []


def test_the_allow_list_names_origins_and_host_patterns() -> None:
    strict = Egress(["https://api.example.com", "https://*.models.example.org"])
    assert strict.check("https://api.example.com/v1").host == "api.example.com"
    with pytest.raises(ForbiddenError, match="allow-list"):
        strict.check("https://api.other.example/v1")  # "public" is not on this list
    with pytest.raises(ForbiddenError, match="allow-list"):
        strict.check("http://api.example.com/v1")  # another scheme is another origin
    named = Egress(["http://10.0.0.7:11434"])
    assert named.check("http://10.0.0.7:11434/v1").port == 11434  # named: private is fine
    with pytest.raises(ForbiddenError):
        named.check("http://10.0.0.8:11434/v1")
    with pytest.raises(ForbiddenError, match="not a public address"):
        Egress().check("http://[::ffff:10.0.0.1]/v1")


def test_a_path_is_joined_from_parts() -> None:
    base = parse_upstream("https://api.example.com/v1/")
    assert str(join(base, "/chat/completions")) == "https://api.example.com/v1/chat/completions"
    with pytest.raises(ValidationError):
        parse_upstream("ftp://example.com")


def test_a_home_needs_no_network_for_the_defaults(tmp_path: Path) -> None:
    """A name that does not resolve here is judged when it is used, not refused now."""
    assert Egress().check("https://unresolvable.invalid/v1").host == "unresolvable.invalid"
