"""Every page of the dashboard, at a desk's width and a phone's, over a seeded home.

The home is the demo home the README's screenshots show
(:mod:`memoryd.dashboard.demo`: a long row, Chinese text, superseded facts,
conversations, a team space, two agents, a finished import) plus an import
stopped half-way. Each page opens with no console error, no raw ``None``,
float tail or ISO time in its text, no word broken inside a table cell,
every time shown as a date and time in the reader's own zone, and no
sideways scroll at 375 px.
"""

from __future__ import annotations

import re
import time
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest
from playwright.sync_api import Browser, Page
from server_harness import RunningServer
from test_dashboard_browser import signed_in

from memoryd.dashboard.demo import DemoHome, seed_demo_home

# (width, the reader's zone): a zone half an hour off UTC catches a time left in UTC
READERS = ((1280, "Asia/Kolkata"), (375, "America/Sao_Paulo"))
RAW = re.compile(r"\bNone\b|\d\.\d{6,}|\d{4}-\d\d-\d\dT\d\d:\d\d|\bUTC\b|\b1[5-9]\d{14}\b")
PAGES = (
    "/",
    "/search?q=Porto&trace=true",
    "/conversations",
    "/imports",
    "/spaces",
    "/settings",
    "/stats",
    "/memories/new",
)
# a word, in a script that breaks between words; longer ones (ids, digests) may break
WORD_CHARS = 24
BROKEN_WORDS = """(limit) => {
  const broken = [];
  for (const cell of document.querySelectorAll("main td, main th")) {
    const walk = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node = walk.nextNode(); node; node = walk.nextNode()) {
      for (const m of node.data.matchAll(/[A-Za-z0-9_\\u00C0-\\u024F]+/g)) {
        if (m[0].length > limit) continue;
        const range = document.createRange();
        range.setStart(node, m.index);
        range.setEnd(node, m.index + m[0].length);
        const tops = [...range.getClientRects()].filter((r) => r.width > 0).map((r) => r.top);
        if (tops.length && Math.max(...tops) - Math.min(...tops) > 4) broken.push(m[0]);
      }
    }
  }
  return broken;
}"""
# a long file, so that the import is still running when it is stopped
DIARY = "# Moving diary\n\n" + "\n\n".join(
    f"## Week {n}\nWeek {n} of the move: {n} boxes packed, the landlord called about the keys."
    for n in range(1, 301)
)


def interrupt_imports(server: RunningServer, keys: list[str]) -> list[str]:
    """One import for each key, stopped half-way as Ctrl-C stops one: the process's engine
    is told to stop (what ``memoryd import-file``'s Ctrl-C and ``memoryd serve``'s
    shutdown call), its worker rolls back what the import wrote and marks it interrupted.

    The server's workers claim nothing after it: call it last, on a server of its own.
    """
    clients = [server.client(key) for key in keys]
    try:
        ids = [
            c.post("/v1/imports", files={"file": ("moving-diary.md", DIARY.encode())}).json()["id"]
            for c in clients
        ]

        def state(i: int) -> dict[str, object]:
            found: dict[str, object] = clients[i].get(f"/v1/imports/{ids[i]}").json()
            return found

        deadline = time.monotonic() + 60
        while not all(int(str(state(i)["extraction_progress"])) >= 1 for i in range(len(ids))):
            assert time.monotonic() < deadline, [state(i) for i in range(len(ids))]
            time.sleep(0.02)
        server.service.engine.interrupt()
        while not all(state(i)["status"] == "interrupted" for i in range(len(ids))):
            assert time.monotonic() < deadline, [state(i) for i in range(len(ids))]
            time.sleep(0.05)
    finally:
        for c in clients:
            c.close()
    return ids


@pytest.fixture(scope="module")
def seeded(server: RunningServer) -> DemoHome:
    home = seed_demo_home(server.url)
    (stopped,) = interrupt_imports(server, [home.key])
    home.paths["stopped import"] = f"/imports/{stopped}"
    return home


def times_in_zone(page: Page, zone: str) -> list[tuple[str, str, str]]:
    """(UTC instant, shown, expected) of each time on the page that is not the reader's."""
    wrong = []
    for instant, text, seconds in page.eval_on_selector_all(
        "main time", "ts => ts.map(t => [t.dateTime, t.textContent, 'seconds' in t.dataset])"
    ):
        at = datetime.fromisoformat(instant).astimezone(ZoneInfo(zone))
        expected = at.strftime("%Y-%m-%d %H:%M:%S" if seconds else "%Y-%m-%d %H:%M")
        if text != expected:
            wrong.append((instant, text, expected))
    return wrong


@pytest.mark.parametrize(("width", "zone"), READERS)
def test_every_page_opens_clean(
    browser: Browser, server: RunningServer, seeded: DemoHome, width: int, zone: str
) -> None:
    page = signed_in(
        browser, server, seeded.key, viewport={"width": width, "height": 900}, timezone_id=zone
    )
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    times = 0
    for path in (*PAGES, *seeded.paths.values()):
        page.goto(path)
        page.wait_for_load_state("networkidle")
        text = page.locator("main").inner_text()
        assert not RAW.search(text), (path, RAW.search(text))
        assert not times_in_zone(page, zone), (path, times_in_zone(page, zone))
        times += page.locator("main time").count()
        broken = page.evaluate(BROKEN_WORDS, WORD_CHARS)
        assert not broken, (path, broken)
        if width < 640:
            wide = page.evaluate("document.documentElement.scrollWidth")
            assert wide <= width, (path, wide)
    assert times > 30  # the lists, a memory's fields and history, the turns: all checked
    time.sleep(0.2)  # a late console message of the last page
    assert not errors, errors
    page.close()


def bar_of(page: Page, where: str) -> dict[str, float]:
    """The bar in ``where``: its value, its maximum, and its width beside its container's."""
    found: dict[str, float] = page.locator(f"{where} progress").evaluate(
        "p => ({value: p.position >= 0 ? p.value : -1, max: p.max, "
        "width: p.getBoundingClientRect().width, "
        "room: document.querySelector('main').getBoundingClientRect().width})"
    )
    return found


def test_a_finished_import_reads_as_done(
    browser: Browser, server: RunningServer, seeded: DemoHome
) -> None:
    page = signed_in(browser, server, seeded.key, viewport={"width": 1280, "height": 900})
    page.goto(seeded.paths["import"])
    assert page.locator("#import-status").inner_text() == "completed"
    bar = bar_of(page, "#import")
    assert bar["value"] == bar["max"] > 0, bar
    assert bar["width"] >= 0.3 * bar["room"], bar  # a bar, not a stub beside the page
    assert page.locator("#import-progress .bar-label").inner_text() == "done"
    page.goto("/imports")
    row = page.locator("tr.import.completed")
    assert row.locator(".bar-label").inner_text() == "done"
    bar = bar_of(page, "tr.import.completed")
    assert bar["value"] == bar["max"] > 0, bar
    page.close()


def test_an_interrupted_import_says_where_it_stopped_and_what_to_do(
    browser: Browser, server: RunningServer, seeded: DemoHome
) -> None:
    page = signed_in(browser, server, seeded.key, viewport={"width": 1280, "height": 900})
    page.goto("/imports")
    row = page.locator("tr.import.interrupted")
    assert "interrupted" in row.inner_text()
    assert re.fullmatch(r"stopped, 0 of \d+ kept", row.locator(".bar-label").inner_text())
    page.goto(seeded.paths["stopped import"])
    assert page.locator("#import-status").inner_text() == "interrupted"
    bar = bar_of(page, "#import-progress")
    assert bar["value"] == 0 and bar["max"] > 1, bar  # what it kept: its work was rolled back
    assert re.search(r"interrupted at \d+ of \d+", page.locator("#import-stopped-at").inner_text())
    assert page.locator("#import-stopped").is_visible()
    for action in ("Resume", "Roll back"):
        assert page.locator(f"#import button:has-text('{action}')").is_visible()
    assert page.locator("#import-stopped-at.error").count() == 0  # a pause, not a failure
    page.close()
