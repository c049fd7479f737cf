"""No page of another origin can frame the dashboard, and no form is taken without its token.

The framing checks run in headless Chromium: a page served by another
loopback server, on another host name and on another port of 127.0.0.1
(the same *site* as the dashboard, so its ``SameSite=Strict`` cookie is
sent), puts a signed-in dashboard page in an iframe; the frame stays empty.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, expect
from server_harness import RunningServer, create_tenant

from memoryd.dashboard import COOKIE

PAGES = ["/", "/sign-in", "/search", "/settings", "/stats", "/memories/new", "/memories/nope"]


class Framer:
    """Another origin's page, which frames the given dashboard path."""

    def __init__(self, target: str) -> None:
        outer = self
        self.target = target

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                body = (
                    f'<!doctype html><title>elsewhere</title><iframe id="f" '
                    f'src="{outer.target}{self.path}" width="800" height="600"></iframe>'
                ).encode()
                self.send_response(200)
                self.send_header("content-type", "text/html")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def framer(server: RunningServer) -> Iterator[Framer]:
    framing = Framer(server.url)
    yield framing
    framing.close()


def memory_id(server: RunningServer, key: str) -> str:
    made = httpx.post(
        f"{server.url}/v1/memories",
        json={"content": "The user keeps bees"},
        headers={"x-api-key": key},
        timeout=20,
    )
    assert made.status_code == 201, made.text
    return str(made.json()["id"])


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])  # same site, another site
def test_no_dashboard_page_loads_in_a_frame_of_another_origin(
    browser: Browser, server: RunningServer, framer: Framer, host: str
) -> None:
    _, key = create_tenant(server, "framed")
    mine = memory_id(server, key)
    context = browser.new_context()
    port = server.url.rsplit(":", 1)[1]
    context.add_cookies([{"name": COOKIE, "value": key, "url": server.url}])
    page = context.new_page()
    for path in [*PAGES, f"/memories/{mine}"]:
        page.goto(f"http://{host}:{framer.port}{path}")
        expect(page).to_have_title("elsewhere")
        frame = page.frame_locator("#f")
        expect(frame.locator("body")).not_to_contain_text("memoryd", timeout=2000)
        expect(frame.locator("button")).to_have_count(0)
    context.close()
    still = httpx.get(
        f"http://127.0.0.1:{port}/v1/memories/{mine}", headers={"x-api-key": key}, timeout=20
    )
    assert still.status_code == 200


def test_every_dashboard_answer_forbids_framing(server: RunningServer) -> None:
    _, key = create_tenant(server, "headers")
    with httpx.Client(base_url=server.url, cookies={COOKIE: key}, timeout=20) as client:
        for path in [*PAGES, "/dashboard/static/dashboard.css"]:
            answer = client.get(path)
            assert answer.headers["x-frame-options"] == "DENY", path
            policy = answer.headers["content-security-policy"]
            assert "frame-ancestors 'none'" in policy and "script-src 'self'" in policy
            assert answer.headers["x-content-type-options"] == "nosniff"
            assert answer.headers["referrer-policy"] == "same-origin"


def token_of(page: str) -> str:
    found = re.search(r'name="csrf" value="([0-9a-f]+)"', page)
    assert found, page[:300]
    return found.group(1)


def test_a_form_is_taken_only_with_its_sessions_token(server: RunningServer) -> None:
    _, key = create_tenant(server, "forms")
    _, other = create_tenant(server, "other")
    mine = memory_id(server, key)
    with (
        httpx.Client(base_url=server.url, cookies={COOKIE: key}, timeout=20) as client,
        httpx.Client(base_url=server.url, cookies={COOKIE: other}, timeout=20) as stranger,
    ):
        theirs = token_of(stranger.get("/memories/new").text)
        for sent in ({}, {"csrf": ""}, {"csrf": theirs}, {"csrf": "0" * 64}):
            refused = client.post(f"/memories/{mine}/delete", data=sent)
            assert refused.status_code == 403, sent
            assert "reload the page" in refused.text
        assert client.get(f"/memories/{mine}").status_code == 200  # nothing was deleted
        token = token_of(client.get(f"/memories/{mine}").text)
        done = client.post(f"/memories/{mine}/delete", data={"csrf": token})
        assert done.status_code == 303
    gone = httpx.get(f"{server.url}/v1/memories/{mine}", headers={"x-api-key": key}, timeout=20)
    assert gone.json()["state"] == "deleted"


def test_signing_in_needs_the_sign_in_pages_token(server: RunningServer) -> None:
    _, key = create_tenant(server, "signs")
    with httpx.Client(base_url=server.url, timeout=20) as client:
        assert client.post("/sign-in", data={"api_key": key}).status_code == 403
        token = token_of(client.get("/sign-in").text)  # sets the browser's form session
        signed = client.post("/sign-in", data={"api_key": key, "csrf": token})
        assert signed.status_code == 303 and client.cookies.get(COOKIE) == key


def test_the_icon_a_browser_asks_for_is_there_without_a_key(server: RunningServer) -> None:
    with server.client() as anonymous:
        icon = anonymous.get("/favicon.ico")
        assert icon.status_code == 200 and icon.headers["content-type"] == "image/svg+xml"
        assert icon.text.startswith("<svg")
        assert anonymous.get("/v1/memories").status_code == 401  # the rest still asks for one
        page = anonymous.get("/sign-in")
    assert 'rel="icon"' in page.text
