"""A stopped import, from the dashboard: resumed, it runs to its end; rolled back, it is gone.

The imports are stopped the way Ctrl-C stops them (see ``interrupt_imports``),
which stops this module's server's workers for good; the one resumed is
taken up by the next process's worker, as a restarted ``memoryd serve``'s
would, while the page follows it.
"""

from __future__ import annotations

from playwright.sync_api import Browser, expect
from server_harness import RunningServer, create_tenant
from test_dashboard_browser import signed_in
from test_dashboard_sweep import interrupt_imports

from memoryd.config import load_settings
from memoryd.embed.local import LocalEmbedder
from memoryd.imports.service import start_import_worker
from memoryd.service import MemoryService


def test_a_stopped_import_resumed_runs_to_its_end_and_one_rolled_back_is_gone(
    browser: Browser, server: RunningServer, embedder: LocalEmbedder
) -> None:
    _, resumer = create_tenant(server, "resumer")
    _, dropper = create_tenant(server, "dropper")
    resumed, dropped = interrupt_imports(server, [resumer, dropper])

    page = signed_in(browser, server, dropper)
    page.goto(f"/imports/{dropped}")
    page.click("#import button:has-text('Roll back')")
    expect(page.locator("#import-status")).to_have_text("rolled back")
    expect(page.locator("#import button")).to_have_count(0)  # nothing left to resume
    page.close()

    page = signed_in(browser, server, resumer)
    page.goto(f"/imports/{resumed}")
    page.click("#import button:has-text('Resume')")
    expect(page.locator("#import-status")).to_have_text("processing")
    following = MemoryService(settings=load_settings(server.home), embedder=embedder)
    try:
        start_import_worker(following)
        expect(page.locator("#import-status")).to_have_text("completed", timeout=120_000)
    finally:
        following.close()
    expect(page.locator("#import-progress .bar-label")).to_have_text("done")
    page.goto("/imports")
    expect(page.locator("tr.import.completed .bar-label")).to_have_text("done")
    page.close()
