"""Screenshots of the dashboard for the docs: ``.venv/bin/python scripts/dashboard_screenshots.py``.

Starts a real ``memoryd serve`` on a fresh home in a temporary folder, seeds
it with the demo home the dashboard tests open too
(:mod:`memoryd.dashboard.demo`: a changing life in English and Chinese,
superseded facts, conversations, a team space, two agents, an import), signs
in with headless Chromium (Debian's ``/usr/bin/chromium``) and saves every
page to ``docs/images/``. Rerun it whenever a page changes: the README's
pictures are only as true as their last run.
"""

from __future__ import annotations

import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
from playwright.sync_api import Page, ViewportSize, sync_playwright

from memoryd.dashboard.demo import CHANGES, DemoHome, seed_demo_home

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "images"
DESK = ViewportSize(width=1200, height=760)
PHONE = ViewportSize(width=375, height=760)
TIMEZONE = "Europe/Lisbon"  # the demo person's; every time on a page is the reader's own
START_TIMEOUT_S = 120
BROWSER_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]


@dataclass
class Shot:
    """One picture: a page, what to wait for, where on it to look."""

    name: str
    path: str
    ready: str = "main h1"  # shown once the page (or its fragment) has arrived
    anchor: str | None = None  # scrolled to the top of the picture
    full_page: bool = False


def shots(home: DemoHome) -> list[Shot]:
    p = home.paths
    return [
        Shot("memories", "/"),
        Shot("memories-space", p["team memories"]),
        Shot("memories-agent", p["agent memories"]),
        Shot("memory", p["memory"], full_page=True),
        Shot("search", "/search?q=what%20coffee%20do%20I%20like", ready="#results .hit"),
        Shot("conversations", "/conversations"),
        Shot("conversation", p["conversation"], full_page=True),
        Shot("imports", "/imports", anchor="text=Earlier imports"),
        Shot("import", p["import"]),
        Shot("spaces", "/spaces"),
        Shot("settings", "/settings"),
        Shot("stats", "/stats", ready=".health.up", full_page=True),
    ]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def serve(home: Path, port: int) -> subprocess.Popen[str]:
    """``memoryd serve`` as a person starts it, answering on loopback."""
    process = subprocess.Popen(
        [sys.executable, "-m", "memoryd.cli", "--home", str(home), "serve", "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            output = process.stdout.read() if process.stdout else ""
            raise RuntimeError(f"memoryd serve stopped:\n{output}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                return process
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    process.kill()
    raise RuntimeError("memoryd serve did not answer /health")


def check_fonts() -> None:
    """Chinese text needs a font that has it, or the pictures show empty boxes."""
    found = subprocess.run(["fc-list", ":lang=zh"], capture_output=True, text=True).stdout
    if not found.strip():
        raise SystemExit(
            "no Chinese font for Chromium: apt-get install fonts-noto-cjk (or fonts-wqy-microhei)"
        )


def check_life(home: DemoHome) -> None:
    """Only the changes the demo makes show as superseded: the pictures must not show a
    fact replaced by an unrelated one (the offline rules read meaning, and can misread)."""
    with httpx.Client(base_url=home.url, headers={"X-API-Key": home.key}) as api:
        listed = api.get("/v1/memories", params={"limit": 200}).json()["memories"]
    superseded = {m["content"] for m in listed if m.get("superseded_by")}
    meant = {old[0] for old, _ in CHANGES}
    if superseded != meant:
        raise SystemExit(f"the demo life changed where it should not: {superseded ^ meant}")


def sign_in(page: Page, key: str) -> None:
    page.goto("/sign-in")
    page.fill("#api_key", key)
    page.keyboard.press("Enter")
    page.wait_for_selector("#stat-total")


def capture(page: Page, shot: Shot, name: str) -> None:
    page.goto(shot.path)
    page.wait_for_load_state("networkidle")
    page.wait_for_selector(shot.ready)
    if shot.anchor is not None:
        page.locator(shot.anchor).evaluate("e => e.scrollIntoView()")
    page.screenshot(path=OUT / f"dashboard-{name}.png", full_page=shot.full_page)


def main() -> None:
    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    check_fonts()
    folder = Path(tempfile.mkdtemp(prefix="memoryd-shots-"))
    port = free_port()
    server = serve(folder / "home", port)
    try:
        home = seed_demo_home(f"http://127.0.0.1:{port}")
        check_life(home)
        OUT.mkdir(parents=True, exist_ok=True)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium, args=BROWSER_FLAGS)
            for viewport, only in ((DESK, None), (PHONE, "memories")):
                page = browser.new_page(base_url=home.url, viewport=viewport, timezone_id=TIMEZONE)
                sign_in(page, home.key)
                for shot in shots(home):
                    if only is None:
                        capture(page, shot, shot.name)
                    elif shot.name == only:
                        capture(page, shot, f"{shot.name}-phone")
                page.close()
            browser.close()
        print(f"saved to {OUT}")
    finally:
        server.send_signal(signal.SIGINT)  # Ctrl-C, as a person stops it
        server.wait(timeout=30)
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
