"""Screenshots of the dashboard for the docs: ``python scripts/dashboard_screenshots.py``.

Starts ``memoryd serve`` on a fresh home in a temporary folder, adds a few
memories through the REST API, signs in with headless Chromium and saves
the main pages to ``docs/images/``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "images"
PORT = 18787
URL = f"http://127.0.0.1:{PORT}"
MEMORIES = [
    ("I moved to Lisbon in 2025 with my partner", "profile", ["home"]),
    ("I prefer dark roast coffee, no sugar", "preferences", ["coffee"]),
    ("Use pnpm, not npm, in the billing repo", "preferences", ["billing", "tooling"]),
    ("The billing service retries webhooks 5 times with backoff", "entities", ["billing"]),
    ("Decided to ship the invoice export on Friday after QA", "cases", ["billing"]),
    ("My daughter Ana starts school in September", "events", ["family"]),
]


def main() -> None:
    home = Path(tempfile.mkdtemp(prefix="memoryd-shots-"))
    env = {**os.environ, "MEMORYD_HOME": str(home)}
    server = subprocess.Popen(
        [sys.executable, "-m", "memoryd.cli", "serve", "--port", str(PORT)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        key = ""
        deadline = time.monotonic() + 120
        while not key and time.monotonic() < deadline:
            line = server.stdout.readline() if server.stdout else ""
            if line.strip().startswith("mk_"):
                key = line.strip()
        for _ in range(200):
            try:
                if httpx.get(f"{URL}/health").status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.3)
        with httpx.Client(base_url=URL, headers={"X-API-Key": key}) as api:
            ids = [
                api.post("/v1/memories", json={"content": c, "category": cat, "tags": tags}).json()[
                    "id"
                ]
                for c, cat, tags in MEMORIES
            ]
            api.put(f"/v1/memories/{ids[1]}", json={"content": "I prefer light roast coffee now"})
        OUT.mkdir(parents=True, exist_ok=True)
        with sync_playwright() as p:
            browser = p.chromium.launch(
                executable_path=shutil.which("chromium") or "/usr/bin/chromium",
                args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
            )
            page = browser.new_page(base_url=URL, viewport={"width": 1100, "height": 720})
            page.goto("/sign-in")
            page.fill("#api_key", key)
            page.keyboard.press("Enter")
            page.wait_for_selector("#stat-total")
            page.screenshot(path=OUT / "dashboard-memories.png")
            page.goto("/search?q=what%20coffee%20does%20the%20user%20like")
            page.screenshot(path=OUT / "dashboard-search.png")
            page.goto("/stats")
            page.wait_for_selector(".health.up")
            page.screenshot(path=OUT / "dashboard-stats.png", full_page=True)
            page.goto(f"/memories/{ids[1]}")
            page.screenshot(path=OUT / "dashboard-memory.png", full_page=True)
            browser.close()
        print(f"saved to {OUT}")
    finally:
        server.terminate()
        server.wait(timeout=30)
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
