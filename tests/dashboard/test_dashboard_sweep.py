"""Every page of the dashboard, at a desk's width and a phone's, over a seeded home.

The home holds what makes pages hard: a long memory, Chinese text, a fact
that was superseded, a conversation, a finished import. Each page opens with
no console error, no raw ``None`` or float tail in its text, and no sideways
scroll at 375 px.
"""

from __future__ import annotations

import re
import time

import pytest
from playwright.sync_api import Browser
from server_harness import RunningServer, completed_task, create_tenant
from test_dashboard_browser import signed_in

WIDTHS = (1280, 375)
RAW = re.compile(r"\bNone\b|\d\.\d{6,}")


@pytest.fixture(scope="module")
def seeded(server: RunningServer) -> tuple[str, dict[str, str]]:
    """A tenant's key and the paths of its pages that need an id."""
    _, key = create_tenant(server, "sweep")
    with server.client(key) as api:
        api.post("/v1/memories", json={"content": "A rather long memory about planning " * 15})
        api.post("/v1/memories", json={"content": "我住在上海浦东，每天坐地铁上班"})
        old = api.post("/v1/memories", json={"content": "I live in Lyon", "category": "profile"})
        moved = {"content": "I moved to Porto", "category": "profile"}
        new = api.post("/v1/memories", json={**moved, "replaces": old.json()["id"]})
        api.post(
            "/v1/memories",
            json={
                "messages": [
                    {"role": "user", "content": "We ship the billing service on Thursday"},
                    {"role": "assistant", "content": "Noted"},
                ],
                "session_id": "sweep-chat",
                "mode": "raw",
            },
        )
        upload = api.post(
            "/v1/imports",
            files={"file": ("notes.md", b"# Notes\n\n## Deploys\nWe deploy on Tuesdays.\n")},
        ).json()
        completed_task(lambda: api.get(f"/v1/imports/{upload['id']}").json(), 60.0)
    return key, {
        "memory": f"/memories/{new.json()['id']}",
        "old": f"/memories/{old.json()['id']}",
        "edit": f"/memories/{new.json()['id']}/edit",
        "conversation": "/conversations/sweep-chat",
        "import": f"/imports/{upload['id']}",
    }


@pytest.mark.parametrize("width", WIDTHS)
def test_every_page_opens_clean(
    browser: Browser, server: RunningServer, seeded: tuple[str, dict[str, str]], width: int
) -> None:
    key, paths = seeded
    page = signed_in(browser, server, key, viewport={"width": width, "height": 900})
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    for path in (
        "/",
        "/search?q=Porto&trace=true",
        "/conversations",
        "/imports",
        "/spaces",
        "/settings",
        "/stats",
        "/memories/new",
        *paths.values(),
    ):
        page.goto(path)
        page.wait_for_load_state("networkidle")
        text = page.locator("main").inner_text()
        assert not RAW.search(text), (path, RAW.search(text))
        if width < 640:
            wide = page.evaluate("document.documentElement.scrollWidth")
            assert wide <= width, (path, wide)
    time.sleep(0.2)  # a late console message of the last page
    assert not errors, errors
    page.close()
