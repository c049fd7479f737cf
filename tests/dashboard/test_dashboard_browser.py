"""The dashboard, clicked through in headless Chromium against a real server."""

from __future__ import annotations

import json
from pathlib import Path

from playwright.sync_api import Browser, Page, expect
from server_harness import RunningServer, completed_task, create_tenant

COFFEE = "I prefer dark roast coffee in the morning"
# the height of an element's text itself (a cell stretches to its row's height)
TEXT_HEIGHT = (
    "e => { const r = document.createRange(); r.selectNodeContents(e); "
    "return r.getBoundingClientRect().height; }"
)


def signed_in(browser: Browser, server: RunningServer, key: str, **options: object) -> Page:
    page = browser.new_page(base_url=server.url, **options)  # type: ignore[arg-type]
    page.on("dialog", lambda dialog: dialog.accept())
    page.goto("/")
    expect(page).to_have_url(f"{server.url}/sign-in")
    page.fill("#api_key", key)
    page.keyboard.press("Enter")
    expect(page.locator("h1")).to_have_text("Memories")
    return page


def stat_total(page: Page) -> int:
    page.goto("/")
    return int(page.locator("#stat-total").inner_text())


def test_add_find_edit_delete_in_a_browser(browser: Browser, server: RunningServer) -> None:
    _, key = create_tenant(server, "alice")
    page = browser.new_page(base_url=server.url)
    page.goto("/sign-in")
    page.fill("#api_key", "mk_wrong")
    page.click("text=Sign in >> nth=-1")
    expect(page.locator(".error")).to_contain_text("invalid")
    page.close()

    page = signed_in(browser, server, key)
    assert stat_total(page) == 0
    page.click("text=Add memory")
    page.fill("#content", COFFEE)
    page.select_option("#category", "preferences")
    page.fill("#tags", "coffee, morning")
    page.click("button:has-text('Add')")
    expect(page.locator("#content")).to_have_text(COFFEE)
    memory_url = page.url
    assert stat_total(page) == 1
    page.click("nav >> text=Stats")
    expect(page.locator("#health")).to_contain_text("healthy")  # a real search round trip
    expect(page.locator("#stats-total")).to_have_text("1")
    expect(page.locator(".chart rect")).to_have_count(1)  # today's bar

    # search as you type: the results come in without a page load
    page.click("nav >> text=Search")
    page.locator("#q").press_sequentially("what coffee do I like")
    hit = page.locator("#results .hit").first
    expect(hit).to_contain_text(COFFEE)
    expect(hit.locator("td").first).to_have_text("1.000")
    hit.locator("a").click()
    expect(page).to_have_url(memory_url)

    page.click("text=Edit")
    page.fill("#importance", "lots")
    page.click("button:has-text('Save')")
    expect(page.locator(".error")).to_contain_text("importance must be a number")
    page.fill("#content", "I prefer light roast coffee now")
    page.fill("#importance", "0.8")
    page.click("button:has-text('Save')")
    expect(page.locator("#content")).to_have_text("I prefer light roast coffee now")
    history = page.locator("#history li")
    expect(history).to_have_count(2)
    expect(history.nth(1)).to_contain_text("update")
    expect(history.nth(1).locator("del", has_text=COFFEE).first).to_be_visible()
    expect(history.nth(1).locator("ins", has_text="light roast").first).to_be_visible()

    page.click("button:has-text('Delete')")  # the confirm dialog is accepted
    expect(page.locator("h1")).to_have_text("Memories")
    assert stat_total(page) == 0
    page.click("nav >> text=Stats")
    expect(page.locator("#stats-total")).to_have_text("0")
    page.click("text=Sign out")
    page.goto("/")
    expect(page).to_have_url(f"{server.url}/sign-in")


def test_another_tenants_memory_is_a_404_page(browser: Browser, server: RunningServer) -> None:
    _, bob_key = create_tenant(server, "bob")
    with server.client(bob_key) as bob:
        bob_memory = bob.post("/v1/memories", json={"content": "Bob's locker code is 4711"}).json()
    _, key = create_tenant(server, "carol")
    page = signed_in(browser, server, key)
    for path in (f"/memories/{bob_memory['id']}", f"/memories/{bob_memory['id']}/edit"):
        response = page.goto(path)
        assert response is not None and response.status == 404
        expect(page.locator("h1")).to_have_text("Not found")
        expect(page.locator("body")).not_to_contain_text("4711")


def test_html_in_a_memory_is_shown_as_text(browser: Browser, server: RunningServer) -> None:
    _, key = create_tenant(server, "dave")
    content = '<script>window.pwned = 1</script><img src=x onerror="window.pwned = 2"> <b>bold</b>'
    with server.client(key) as dave:
        memory = dave.post("/v1/memories", json={"content": content, "tags": ["<i>t</i>"]}).json()
    page = signed_in(browser, server, key)
    page.goto(f"/memories/{memory['id']}")
    expect(page.locator("#content")).to_have_text(content)
    assert page.evaluate("window.pwned") is None
    assert page.locator("#content b").count() == 0
    page.goto("/")
    expect(page.locator("table.list")).to_contain_text("<script>")
    assert page.evaluate("window.pwned") is None


def test_phone_width_and_keyboard_alone(browser: Browser, server: RunningServer) -> None:
    _, key = create_tenant(server, "erin")
    page = signed_in(browser, server, key, viewport={"width": 375, "height": 700})
    with server.client(key) as erin:
        erin.post("/v1/memories", json={"content": "A rather long memory " * 20})
    page.goto("/")
    assert page.evaluate("document.documentElement.scrollWidth") <= 375
    # to "Add memory" by Tab alone, then the form by keyboard
    for _ in range(10):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.textContent") == "Add memory":
            break
    page.keyboard.press("Enter")
    expect(page.locator("h1")).to_have_text("Add memory")
    page.keyboard.type("Typed without a mouse")  # the content box has the focus first
    for _ in range(6):  # past category, tags and importance to the button
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.type") == "submit":
            break
    page.keyboard.press("Enter")
    expect(page.locator("#content")).to_have_text("Typed without a mouse")
    assert page.evaluate("document.documentElement.scrollWidth") <= 375


HANDBOOK = b"""# Team handbook

## Deploys
We deploy the billing service on Tuesdays after the QA sign-off.

## On call
The on-call engineer answers pages within fifteen minutes.
"""


def test_import_roll_back_and_export(browser: Browser, server: RunningServer) -> None:
    _, key = create_tenant(server, "frank")
    page = signed_in(browser, server, key)
    with server.client(key) as frank:
        frank.post("/v1/memories", json={"content": "I take the train to work"})
    before = stat_total(page)

    page.click("text=Import & export")
    page.set_input_files(
        "#file", {"name": "handbook.md", "mimeType": "text/markdown", "buffer": HANDBOOK}
    )
    page.click("button:has-text('Import')")
    # the page follows the task until it is done, by itself
    expect(page.locator("#import-status")).to_have_text("completed", timeout=60_000)
    created = int(page.locator("#import-created").inner_text())
    assert created >= 1
    import_url = page.url
    assert stat_total(page) == before + created

    page.goto(import_url)
    page.click("button:has-text('Roll back')")
    expect(page.locator("#import-status")).to_have_text("rolled back")
    assert stat_total(page) == before

    page.click("text=Import & export")
    with page.expect_download() as download:
        page.click("text=Download every memory as JSON Lines")
    lines = Path(download.value.path()).read_text().splitlines()
    records = [json.loads(line) for line in lines]
    assert records[0]["type"] == "header"
    contents = [r["memory"]["content"] for r in records if r["type"] == "memory"]
    assert "I take the train to work" in contents


def test_an_import_refused_says_why(browser: Browser, server: RunningServer) -> None:
    _, key = create_tenant(server, "gina")
    page = signed_in(browser, server, key)
    page.goto("/imports")
    page.set_input_files(
        "#file",
        {"name": "blob.bin", "mimeType": "application/octet-stream", "buffer": bytes(range(256))},
    )
    page.click("button:has-text('Import')")
    expect(page.locator(".error")).to_be_visible()
    expect(page.locator("h1")).to_have_text("Imports")


def test_spaces_invite_accept_share_and_leave(browser: Browser, server: RunningServer) -> None:
    _, owner_key = create_tenant(server, "hana")
    guest_id, guest_key = create_tenant(server, "ivan")
    owner = signed_in(browser, server, owner_key)
    owner.click("nav >> text=Spaces")
    owner.fill("input[name=name]", "Kitchen crew")
    owner.click("button:has-text('Create')")
    team = owner.locator("section.space", has_text="Kitchen crew")
    expect(team).to_be_visible()
    team.locator("input[name=user_id]").fill(guest_id)
    team.locator("button:has-text('Invite')").click()
    expect(owner.locator("section.space", has_text="Kitchen crew")).to_contain_text(guest_id)

    with server.client(owner_key) as api:
        memory = api.post(
            "/v1/memories", json={"content": "The walk-in fridge code is 2580"}
        ).json()
    owner.goto(f"/memories/{memory['id']}")
    owner.select_option("select[name=space_id]", label="Kitchen crew")
    owner.click("button:has-text('Share')")

    def guest_finds_it() -> bool:
        with server.client(guest_key) as api:
            hits = api.get("/v1/memories/search", params={"q": "fridge code"}).json()["results"]
        return any("2580" in h["memory"]["content"] for h in hits)

    assert not guest_finds_it()  # invited, not yet accepted: nothing reaches the guest
    guest = signed_in(browser, server, guest_key)
    guest.click("nav >> text=Spaces")
    invitation = guest.locator("#invitations tr", has_text="Kitchen crew")
    invitation.locator("button:has-text('Accept')").click()
    expect(guest.locator("#invitations")).to_have_count(0)
    assert guest_finds_it()
    guest.goto("/")
    guest.select_option("select[name=space_id]", label="Kitchen crew")
    guest.click("button:has-text('Filter')")
    expect(guest.locator("table.list")).to_contain_text("2580")
    guest.goto("/")
    expect(guest.locator("table.list")).not_to_contain_text("2580")  # the personal space
    guest.click("nav >> text=Spaces")

    guest.locator("section.space", has_text="Kitchen crew").locator(
        "button:has-text('Leave')"
    ).click()
    expect(guest.locator("section.space", has_text="Kitchen crew")).to_have_count(0)
    assert not guest_finds_it()


def test_a_conversation_its_turns_and_what_ingest_made_of_it(
    browser: Browser, server: RunningServer
) -> None:
    _, key = create_tenant(server, "jon")
    with server.client(key) as api:
        accepted = api.post(
            "/v1/memories",
            json={
                "session_id": "trip/planning 1",
                "messages": [
                    {"role": "user", "content": "I live in Madrid with my partner."},
                    {"role": "assistant", "content": "Noted!"},
                    {"role": "user", "content": "<b>thanks</b>"},
                ],
            },
        )
        assert accepted.status_code == 202, accepted.text
        task_id = accepted.json()["task_id"]
        completed_task(lambda: api.get(f"/v1/tasks/{task_id}").json())
    page = signed_in(browser, server, key)
    page.click("nav >> text=Conversations")
    page.click("text=trip/planning 1")
    turns = page.locator("#turns li")
    expect(turns).to_have_count(3)
    expect(turns.nth(2).locator(".said")).to_have_text("<b>thanks</b>")  # text, not markup
    expect(page.locator("table.task").first).to_contain_text("smart")
    expect(page.locator("table.task .decisions").first).to_contain_text("create")
    expect(page.locator("#distilled")).to_contain_text("Madrid")
    response = page.goto("/conversations/no-such-conversation")
    assert response is not None and response.status == 404


def test_versions_of_a_fact_and_loading_an_export(browser: Browser, server: RunningServer) -> None:
    _, key = create_tenant(server, "kim")
    with server.client(key) as api:
        first = api.post("/v1/memories", json={"content": "I live in Berlin"}).json()
        second = api.post("/v1/memories", json={"content": "I live in Munich now"}).json()
        assert api.get(f"/v1/memories/{first['id']}").json()["superseded_by"] == second["id"]
        exported = api.get("/v1/export").text
    page = signed_in(browser, server, key)
    page.goto(f"/memories/{first['id']}")
    versions = page.locator("#chain li")
    expect(versions).to_have_count(2)
    expect(versions.nth(0)).to_contain_text("Berlin")
    expect(versions.nth(1)).to_contain_text("Munich")
    versions.nth(1).locator("a").click()
    expect(page.locator("#content")).to_have_text("I live in Munich now")

    _, other_key = create_tenant(server, "lea")
    other = signed_in(browser, server, other_key)
    other.goto("/imports")
    other.set_input_files(
        "#export",
        {"name": "kim.jsonl", "mimeType": "application/x-ndjson", "buffer": exported.encode()},
    )
    other.click("button:has-text('Load')")
    expect(other.locator("#loaded")).to_contain_text("Loaded 2 memories")
    assert stat_total(other) == 2
    other.goto("/imports")
    other.set_input_files(
        "#export", {"name": "bad.jsonl", "mimeType": "application/x-ndjson", "buffer": b"{nope"}
    )
    other.click("button:has-text('Load')")
    expect(other.locator(".error")).to_be_visible()
    assert stat_total(other) == 2


def test_settings_change_what_the_proxy_api_reads(browser: Browser, server: RunningServer) -> None:
    _, key = create_tenant(server, "maya")
    page = signed_in(browser, server, key)
    page.click("nav >> text=Settings")
    expect(page.locator("#server")).to_contain_text("rules only")  # no LLM on this server
    page.fill("#max_tokens", "lots")
    page.click("button:has-text('Save')")
    expect(page.locator(".error")).to_contain_text("maxTokens")
    page.fill("#max_tokens", "800")
    page.uncheck("#enabled")
    page.select_option("#strategy", "recent")
    page.click("button:has-text('Save')")
    expect(page.locator("#saved")).to_be_visible()
    expect(page.locator("#max_tokens")).to_have_value("800")
    with server.client(key) as api:
        stored = api.get("/api/settings/memory").json()
    assert stored["maxTokens"] == 800 and stored["enabled"] is False
    assert stored["strategy"] == "recent"


def test_the_trace_box_shows_the_trace_at_once_and_stays_ticked(
    browser: Browser, server: RunningServer
) -> None:
    _, key = create_tenant(server, "tracer")
    page = signed_in(browser, server, key)
    page.goto("/memories/new")
    page.fill("#content", COFFEE)
    page.click("button:has-text('Add')")
    page.goto("/search")
    page.locator("#q").press_sequentially("coffee")
    expect(page.locator("#results .hit").first).to_contain_text(COFFEE)
    page.check("input[name=trace]")  # no Search pressed: the trace comes in
    expect(page.locator("#results")).to_contain_text("mmr_diversity")
    expect(page).to_have_url(f"{server.url}/search?q=coffee&trace=true")
    page.reload()  # the URL it followed opens it as it was: the box ticked, the trace shown
    expect(page.locator("input[name=trace]")).to_be_checked()
    expect(page.locator("#results")).to_contain_text("mmr_diversity")
    page.locator("#q").press_sequentially(" morning")  # a new query keeps the trace
    expect(page.locator("#results")).to_contain_text("mmr_diversity")
    page.close()


def test_a_long_row_leaves_the_short_columns_whole(browser: Browser, server: RunningServer) -> None:
    _, key = create_tenant(server, "longrow")
    page = signed_in(browser, server, key, viewport={"width": 1280, "height": 800})
    page.goto("/memories/new")
    page.fill("#content", "The quarterly planning notes say " + "nothing-breaks-here " * 30)
    page.click("button:has-text('Add')")
    page.goto("/")
    row = page.locator("table.list tbody tr").first
    for cell in row.locator("td:not(.wrap)").all():
        text = cell.inner_text().strip()
        if text:  # one line each: no word broken inside it
            height = float(cell.evaluate(TEXT_HEIGHT))
            line = float(cell.evaluate("e => parseFloat(getComputedStyle(e).lineHeight) || 20"))
            assert height < 1.5 * line, (text, height, line)
    page.close()
