"""The dashboard page of a shared copy (a memory with provenance) renders: it was a 500."""

from __future__ import annotations

import httpx
from server_harness import RunningServer, create_tenant

from memoryd.dashboard import COOKIE


def test_a_shared_copys_page_shows_where_it_came_from(server: RunningServer) -> None:
    _, key = create_tenant(server, "sharer")
    api = {"x-api-key": key}
    with httpx.Client(base_url=server.url, timeout=30) as client:
        made = client.post(
            "/v1/memories", json={"content": "The team deploys on Fridays"}, headers=api
        )
        team = client.post("/v1/spaces", json={"name": "team", "space_type": "team"}, headers=api)
        assert made.status_code == 201 and team.status_code == 201, team.text
        shared = client.post(
            f"/v1/memories/{made.json()['id']}/share",
            json={"target_space": team.json()["id"]},
            headers=api,
        )
        assert shared.status_code == 201, shared.text
        copy = shared.json()
        copy_id = copy.get("id") or copy["memory"]["id"]
        client.cookies.set(COOKIE, key)  # signed in, as the browser would be
        page = client.get(f"/memories/{copy_id}")
        assert page.status_code == 200, page.text[:300]
        assert made.json()["id"] in page.text  # the provenance names the original
