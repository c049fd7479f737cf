"""The REST doors of the newcomer's reproductions, through a real server."""

from __future__ import annotations

import time
from typing import Any

from server_harness import RunningServer, TenantClient


def _add(tenant: TenantClient, content: str, **fields: Any) -> dict[str, Any]:
    response = tenant.http.post("/v1/memories", json={"content": content, **fields})
    assert response.status_code == 201, response.text
    body: dict[str, Any] = response.json()
    return body


def _ids(tenant: TenantClient, query: str, **params: Any) -> list[str]:
    response = tenant.http.get("/v1/memories/search", params={"q": query, **params})
    assert response.status_code == 200, response.text
    return [r["memory"]["id"] for r in response.json()["results"]]


def test_routes_take_an_id_prefix(alice: TenantClient, bob: TenantClient) -> None:
    memory = _add(alice, "I moved to Berlin in 2024")
    prefix = memory["id"][:8]
    assert alice.http.get(f"/v1/memories/{prefix}").json()["id"] == memory["id"]
    changed = alice.http.put(f"/v1/memories/{prefix}", json={"importance": 0.9})
    assert changed.status_code == 200 and changed.json()["importance"] == 0.9
    history = alice.http.get(f"/v1/memories/{prefix}/history").json()
    assert history["memory_id"] == memory["id"]
    assert [h["action"] for h in history["history"]] == ["create", "update"]
    # another tenant's prefix is as unknown as its full id
    assert bob.http.get(f"/v1/memories/{prefix}").status_code == 404
    short = alice.http.get(f"/v1/memories/{memory['id'][:3]}")
    assert short.status_code == 404 and "at least 4" in short.json()["error"]["message"]
    assert alice.http.delete(f"/v1/memories/{prefix}").json() == {"status": "deleted"}
    assert alice.http.get(f"/v1/memories/{memory['id']}").json()["state"] == "deleted"


def test_an_ambiguous_prefix_lists_the_candidates(
    server: RunningServer, alice: TenantClient
) -> None:
    made = [_add(alice, f"note number {n}")["id"] for n in range(2)]
    with server.service.store.write() as conn:  # two ids with a common start
        for old, new in zip(made, ("feed0001-note", "feed0002-note"), strict=True):
            conn.execute("UPDATE memories SET id = ? WHERE id = ?", (new, old))
    response = alice.http.get("/v1/memories/feed")
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "validation_error" and "ambiguous" in error["message"]
    assert "feed0001-note" in error["message"] and "feed0002-note" in error["message"]
    assert alice.http.get("/v1/memories/feed0002").json()["content"] == "note number 1"


def test_put_content_updates_the_derived_fields(alice: TenantClient) -> None:
    smart = alice.http.post(
        "/v1/memories",
        json={"messages": [{"role": "user", "content": "My favourite band is Radiohead."}]},
    )
    assert smart.status_code == 202
    task = smart.json()["task_id"]
    deadline = time.monotonic() + 60
    while alice.http.get(f"/v1/tasks/{task}").json()["status"] not in ("completed", "failed"):
        assert time.monotonic() < deadline, "the smart-ingest task did not finish"
        time.sleep(0.05)
    insights = alice.http.get("/v1/memories", params={"memory_type": "insight"}).json()
    band = next(m for m in insights["memories"] if "Radiohead" in m["content"])
    assert "Radiohead" in band["l0_abstract"]
    put = alice.http.put(
        f"/v1/memories/{band['id']}", json={"content": "My favourite band is Portishead."}
    )
    changed = put.json()
    assert "Portishead" in changed["l0_abstract"] and "Radiohead" not in changed["l0_abstract"]
    assert "Radiohead" not in changed["l1_overview"]
    # an empty change writes nothing
    same = alice.http.put(f"/v1/memories/{band['id']}", json={}).json()
    assert same["version"] == changed["version"]
    history = alice.http.get(f"/v1/memories/{band['id']}/history").json()["history"]
    assert [h["action"] for h in history] == ["create", "update"]


def test_archived_memories_leave_search(alice: TenantClient) -> None:
    cat = _add(alice, "We adopted a cat named Miso")
    assert _ids(alice, "cat named Miso")[0] == cat["id"]
    alice.http.put(f"/v1/memories/{cat['id']}", json={"state": "archived"})
    assert cat["id"] not in _ids(alice, "cat named Miso")
    listed = alice.http.get("/v1/memories", params={"state": "archived"}).json()
    assert [m["id"] for m in listed["memories"]] == [cat["id"]]


def test_search_reports_an_absolute_similarity(alice: TenantClient) -> None:
    _add(alice, "Prefers pnpm over npm for JavaScript projects")
    _add(alice, "The user is a backend engineer at Acme")
    found = alice.http.get(
        "/v1/memories/search", params={"q": "which package manager for JavaScript"}
    ).json()["results"]
    assert found[0]["score"] == 1.0 and found[0]["similarity"] > 0.3
    noise = alice.http.get("/v1/memories/search", params={"q": "xylophone marmalade"}).json()
    assert noise["results"][0]["score"] == 1.0  # relative: the best of nothing
    assert all(r["similarity"] < 0.2 for r in noise["results"])
    floored = alice.http.get(
        "/v1/memories/search", params={"q": "xylophone marmalade", "min_similarity": 0.2}
    ).json()
    assert floored["results"] == []


def test_the_same_content_twice_is_one_memory(alice: TenantClient) -> None:
    first = _add(alice, "My locker code is 4711")
    second = _add(alice, "My locker code is 4711")
    assert second["id"] == first["id"] and second["access_count"] == first["access_count"] + 1
    listed = alice.http.get("/v1/memories").json()
    assert [m["content"] for m in listed["memories"]].count("My locker code is 4711") == 1


def test_a_message_over_the_content_limit_is_refused(alice: TenantClient) -> None:
    response = alice.http.post(
        "/v1/memories",
        json={"messages": [{"role": "user", "content": "x" * 200_001}], "mode": "raw"},
    )
    assert response.status_code == 400
    assert "the limit is 200000" in response.json()["error"]["message"]
