"""The dashboard's pages read as a person expects: values, times, each member once."""

from __future__ import annotations

import re

import httpx
from server_harness import RunningServer, create_tenant

from memoryd.dashboard import COOKIE


def test_fields_and_history_show_readable_values(server: RunningServer) -> None:
    _, key = create_tenant(server, "reader")
    api = {"x-api-key": key}
    with httpx.Client(base_url=server.url, timeout=30) as client:
        made = client.post(
            "/v1/memories",
            json={"content": "Standup moved to 9:30", "importance": 0.1 + 0.54},
            headers=api,
        ).json()
        changed = client.put(
            f"/v1/memories/{made['id']}", json={"tags": ["work"], "importance": 0.3}, headers=api
        )
        assert changed.status_code == 200, changed.text
        client.cookies.set(COOKIE, key)
        page = client.get(f"/memories/{made['id']}")
    assert page.status_code == 200, page.text[:300]
    text = re.sub(r"<[^>]+>", " ", page.text)
    assert "0.6400000000000001" not in text and "None" not in text
    assert re.search(r"importance\s+0\.30", text)
    assert "0.64" in text  # the old importance, in the history


def test_a_conversation_without_times_shows_when_it_was_stored(server: RunningServer) -> None:
    _, key = create_tenant(server, "talker")
    api = {"x-api-key": key}
    turns = [
        {"role": "user", "content": "We ship the billing service on Thursday"},
        {"role": "assistant", "content": "Noted: Thursday"},
    ]
    with httpx.Client(base_url=server.url, timeout=30) as client:
        sent = client.post(
            "/v1/memories",
            json={"messages": turns, "session_id": "plan-1", "mode": "raw"},
            headers=api,
        )
        assert sent.status_code in (200, 201, 202), sent.text
        client.cookies.set(COOKIE, key)
        listed = client.get("/conversations").text
        shown = client.get("/conversations/plan-1").text
    row = next(line for line in listed.split("<tr>") if "plan-1" in line)
    assert len(re.findall(r"\d{4}-\d\d-\d\d \d\d:\d\d", row)) == 2  # from and to
    assert len(re.findall(r"<time[^>]*>\d{4}-\d\d-\d\d", shown)) == 2  # each turn's time


def test_a_space_lists_its_owner_once(server: RunningServer) -> None:
    owner, key = create_tenant(server, "owner")
    api = {"x-api-key": key}
    with httpx.Client(base_url=server.url, timeout=30) as client:
        made = client.post("/v1/spaces", json={"name": "crew", "space_type": "team"}, headers=api)
        assert made.status_code == 201, made.text
        client.cookies.set(COOKIE, key)
        listed = client.get("/spaces").text
    members = listed.split('class="members"', 1)[1].split("</ul>", 1)[0]
    assert members.count(owner) == 1, members


def test_the_imports_list_shows_when_each_started_as_a_date_and_time(
    server: RunningServer,
) -> None:
    _, key = create_tenant(server, "importer")
    with httpx.Client(base_url=server.url, timeout=30) as client:
        sent = client.post(
            "/v1/imports",
            files={"file": ("notes.md", b"# Notes\n\nThe deploy runs on Fridays.\n")},
            headers={"x-api-key": key},
        )
        assert sent.status_code == 200 and sent.json()["status"] == "processing", sent.text
        client.cookies.set(COOKIE, key)
        listed = client.get("/imports").text
    row = next(line for line in listed.split("<tr") if "notes.md" in line)
    # the instant for the script, which shows it in the reader's zone; UTC said as such before
    instant = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"
    shown = r"\d{4}-\d\d-\d\d \d\d:\d\d UTC"
    assert re.search(f'<td><time datetime="{instant}">{shown}</time></td>', row), row
