"""OmniRoute's memory API and memory settings, over memoryd's memories, through a real server."""

from __future__ import annotations

from typing import Any

import pytest
from server_harness import RunningServer, TenantClient

from memoryd.proxy.settings import NO_SYSTEM_ROLE


# ---------------------------------------------------------------------- settings
def test_settings_have_seed_002s_defaults_and_are_per_tenant(make_tenant: Any) -> None:
    alice, bob = make_tenant("alice"), make_tenant("bob")
    defaults = alice.http.get("/api/settings/memory").json()
    assert defaults == {
        "enabled": True,
        "maxTokens": 2000,
        "retentionDays": 30,
        "strategy": "hybrid",
        "noSystemRoleProviders": list(NO_SYSTEM_ROLE),
        "upstreams": {},
    }
    changed = alice.http.put("/api/settings/memory", json={"maxTokens": 500, "strategy": "recent"})
    assert changed.status_code == 200
    assert alice.http.get("/api/settings/memory").json()["maxTokens"] == 500  # not a stale copy
    assert bob.http.get("/api/settings/memory").json() == defaults


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ({"maxTokens": 16001}, "maxTokens"),
        ({"maxTokens": -1}, "maxTokens"),
        ({"retentionDays": 0}, "retentionDays"),
        ({"retentionDays": 366}, "retentionDays"),
        ({"strategy": "exact"}, "strategy"),
        ({"colour": "red"}, "colour"),
        ({"upstreams": {"gpt-*": {"url": "ftp://x"}}}, "http"),
    ],
)
def test_bad_settings_are_refused_and_nothing_changes(
    make_tenant: Any, body: dict[str, Any], expected: str
) -> None:
    alice = make_tenant("alice")
    before = alice.http.get("/api/settings/memory").json()
    response = alice.http.put("/api/settings/memory", json=body)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "validation_error"
    assert expected in response.json()["error"]["message"]
    assert alice.http.get("/api/settings/memory").json() == before


def test_a_masked_upstream_key_sent_back_keeps_the_stored_one(
    server: RunningServer, make_tenant: Any
) -> None:
    alice = make_tenant("alice")
    first = {"upstreams": {"claude-*": {"url": "https://example.test/v1", "apiKey": "sk-1"}}}
    shown = alice.http.put("/api/settings/memory", json=first).json()
    assert shown["upstreams"]["claude-*"]["apiKey"] == "********"
    alice.http.put("/api/settings/memory", json={"upstreams": shown["upstreams"]})
    proxy = server.service  # the stored document, as the server reads it
    stored = proxy.store.get_tenant_setting(alice.id, "memory")
    assert stored is not None and stored["upstreams"]["claude-*"]["apiKey"] == "sk-1"


def test_settings_need_a_key(server: RunningServer) -> None:
    with server.client() as anonymous:
        response = anonymous.get("/api/settings/memory")
    assert response.status_code == 401


# ---------------------------------------------------------------------- /api/memory
def post(t: TenantClient, **body: Any) -> dict[str, Any]:
    response = t.http.post("/api/memory", json=body)
    assert response.status_code == 201, response.text
    data: dict[str, Any] = response.json()
    return data


def test_create_list_filter_stats_get_delete(make_tenant: Any) -> None:
    alice, bob = make_tenant("alice"), make_tenant("bob")
    pref = post(alice, content="The user prefers green tea", key="pref:tea", metadata={"n": 1})
    event = post(alice, content="The user shipped v2 on Monday", type="episodic", sessionId="s1")
    post(alice, content="To release: tag, build, publish", type="procedural")
    assert pref["type"] == "factual" and pref["metadata"] == {"n": 1}
    assert event["sessionId"] == "s1"

    listed = alice.http.get("/api/memory").json()
    assert listed["total"] == 3
    assert listed["stats"] == {
        "total": 3,
        "byType": {"factual": 1, "episodic": 1, "procedural": 1, "semantic": 0},
    }
    by_type = alice.http.get("/api/memory", params={"type": "episodic"}).json()
    assert [m["content"] for m in by_type["data"]] == ["The user shipped v2 on Monday"]
    by_session = alice.http.get("/api/memory", params={"sessionId": "s1"}).json()
    assert [m["id"] for m in by_session["data"]] == [event["id"]]
    found = alice.http.get("/api/memory", params={"q": "green tea"}).json()
    assert found["data"][0]["id"] == pref["id"]
    paged = alice.http.get("/api/memory", params={"limit": 1, "page": 2}).json()
    assert (paged["page"], paged["offset"], len(paged["data"])) == (2, 1, 1)
    assert alice.http.get("/api/memory", params={"limit": 1, "offset": 2}).json()["page"] == 3
    assert bob.http.get("/api/memory").json()["total"] == 0  # another key, other memories

    got = alice.http.get(f"/api/memory/{pref['id']}").json()
    assert got == pref
    assert bob.http.get(f"/api/memory/{pref['id']}").status_code == 404
    assert alice.http.delete(f"/api/memory/{pref['id']}").json()["success"] is True
    assert alice.http.get(f"/api/memory/{pref['id']}").status_code == 404
    assert alice.http.delete(f"/api/memory/{pref['id']}").status_code == 404


def test_a_key_is_upserted_and_the_old_text_stays_in_history(make_tenant: Any) -> None:
    alice = make_tenant("alice")
    first = post(alice, content="The user's editor is vim", key="editor")
    second = post(alice, content="The user's editor is helix", key="editor")
    listed = alice.http.get("/api/memory").json()
    assert [m["content"] for m in listed["data"]] == ["The user's editor is helix"]
    assert listed["data"][0]["key"] == "editor"
    old = alice.http.get(f"/v1/memories/{first['id']}").json()
    assert old["superseded_by"] == second["id"]


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ({}, "content is required"),
        ({"content": "x", "type": "spatial"}, "unknown memory type: spatial"),
        ({"content": "x", "metadata": [1]}, "metadata must be a JSON object"),
        ({"content": "x", "expiresAt": "soon"}, "expires_at must be"),
        ({"content": "x", "apiKeyId": "other"}, "unknown fields: apiKeyId"),
    ],
)
def test_bad_memories_are_refused(make_tenant: Any, body: dict[str, Any], expected: str) -> None:
    alice = make_tenant("alice")
    response = alice.http.post("/api/memory", json=body)
    assert response.status_code == 400, response.text
    assert expected in response.json()["error"]["message"]
    assert alice.http.get("/api/memory").json()["total"] == 0


def test_health_is_a_real_round_trip_that_leaves_nothing(make_tenant: Any) -> None:
    alice = make_tenant("alice")
    health = alice.http.get("/api/memory/health").json()
    assert health["working"] is True and "error" not in health
    assert health["latencyMs"] > 0
    assert alice.http.get("/api/memory").json()["total"] == 0


def test_clear_by_type_or_age_needs_saying_what(make_tenant: Any) -> None:
    alice = make_tenant("alice")
    post(alice, content="The user likes jazz")
    post(alice, content="The user moved house in May", type="episodic")
    refused = alice.http.post("/api/memory/clear", json={})
    assert refused.status_code == 400
    assert alice.http.post("/api/memory/clear", json={"type": "episodic"}).json() == {"deleted": 1}
    assert [m["content"] for m in alice.http.get("/api/memory").json()["data"]] == [
        "The user likes jazz"
    ]
    assert alice.http.post("/api/memory/clear", json={"all": True}).json() == {"deleted": 1}


def test_summarising_condenses_old_memories_and_keeps_the_originals(make_tenant: Any) -> None:
    alice = make_tenant("alice")
    long = (
        "The user runs a bakery. It opens at six. The sourdough sells out by nine. "
        "The croissants are made by hand. The rye is the best seller on Fridays."
    )
    old = post(alice, content=long)
    post(alice, content="The user now also sells coffee at the bakery counter.")
    done = alice.http.post("/api/memory/summarize", json={"maxTokens": 20}).json()
    assert done["summarized"] == 1 and done["tokensSaved"] > 0
    condensed = alice.http.get(f"/api/memory/{old['id']}").json()["content"]
    assert condensed == "The user runs a bakery. It opens at six. The sourdough sells out by nine."
    history = alice.http.get(f"/v1/memories/{old['id']}/history").json()
    assert long in str(history)  # nothing lost
    bad = alice.http.post("/api/memory/summarize", json={"maxTokens": "lots"})
    assert bad.status_code == 400
