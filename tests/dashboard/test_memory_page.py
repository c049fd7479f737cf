"""A memory's page shows values as a person reads them: no float's binary tail, no None."""

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
