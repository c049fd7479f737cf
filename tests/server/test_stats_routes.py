"""The eight stats endpoints (reference §4.12–4.13), over the caller's spaces only."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import httpx

if TYPE_CHECKING:
    from server_harness import TenantClient


def _get(t: TenantClient, path: str, **params: Any) -> Any:
    response = t.http.get(path, params=params)
    assert response.status_code == 200, response.text
    return response.json()


def _error(response: httpx.Response, status: int, code: str) -> None:
    assert response.status_code == status, response.text
    assert response.json()["error"]["code"] == code


def _seed(alice: TenantClient) -> tuple[dict[str, Any], dict[str, Any]]:
    post = alice.http.post
    coffee = post(
        "/v1/memories",
        json={"content": "Coffee at 9", "tags": ["food", "am"], "importance": 0.8},
        headers={"X-Agent-Id": "agent-a"},
    ).json()
    post("/v1/memories", json={"content": "Met Sam", "category": "events", "tags": ["food"]})
    post("/v1/memories", json={"messages": [{"role": "user", "content": "hello there"}]})
    team = post("/v1/spaces", json={"name": "T", "space_type": "team"}).json()
    post(f"/v1/memories/{coffee['id']}/share", json={"target_space": team["id"]})
    return coffee, team


def test_overview(alice: TenantClient) -> None:
    _, team = _seed(alice)
    stats = _get(alice, "/v1/stats")
    assert stats["total"] == 4
    assert stats["by_type"] == {"pinned": 3, "session": 1}
    assert stats["by_category"] == {"preferences": 2, "events": 2}
    assert stats["by_space"] == {f"personal/{alice.id}": 3, team["id"]: 1}
    assert stats["by_agent"] == {"agent-a": 2, "": 2}
    assert stats["timeline"][0]["count"] == 4 and len(stats["timeline"]) == 1
    assert stats["timeline"][0]["by_category"] == stats["by_category"]  # all made today
    # the greeting turn carries nothing to remember: importance 0
    assert stats["avg_importance"] == round((0.8 * 2 + 0.5 + 0.0) / 4, 4)
    assert {"by_tier", "by_state", "by_visibility", "avg_confidence", "total_access_count"} <= set(
        stats
    )
    only_team = _get(alice, "/v1/stats", space=team["id"])
    assert only_team["total"] == 1
    _error(alice.http.get("/v1/stats", params={"space": "team/unknown"}), 404, "not_found")
    _error(alice.http.get("/v1/stats", params={"days": 0}), 400, "validation_error")


def test_config(alice: TenantClient) -> None:
    config = _get(alice, "/v1/stats/config")
    assert config["retrieval"]["default_min_score"] == 0.2
    # seed 000 §1.1: the admission weights, the balanced preset's thresholds, the priors
    admission = config["admission"]
    assert admission["default_preset"] == "balanced"
    assert admission["presets"]["balanced"] == {"reject": 0.45, "admit": 0.6}
    assert admission["weights"] == {
        "utility": 0.1,
        "confidence": 0.1,
        "novelty": 0.1,
        "recency": 0.1,
        "type_prior": 0.6,
    }
    assert admission["category_priors"]["profile"] == 0.95
    assert admission["category_priors"]["events"] == 0.45
    assert len(config["retrieval"]["stages"]) == 16
    assert config["spaces"]["search_weights"] == {
        "personal": 1.0,
        "team": 0.8,
        "organization": 0.6,
    }
    assert config["decay"]["tiers"]["core"] == {"beta": 0.8, "floor": 0.9}
    assert config["categories"][0] == "profile" and "supersedes" in config["relation_types"]


def test_tags(alice: TenantClient) -> None:
    _seed(alice)
    tags = _get(alice, "/v1/stats/tags")
    assert tags["tags"][0] == {"name": "food", "count": 3}
    assert tags["total_unique_tags"] == 2 and tags["total_tag_usages"] == 5
    assert tags["cross_space_tags"] == ["am", "food"]
    assert _get(alice, "/v1/stats/tags", min_count=3)["tags"] == [{"name": "food", "count": 3}]


def test_decay(alice: TenantClient) -> None:
    coffee, _ = _seed(alice)
    decay = _get(alice, "/v1/stats/decay", memory_id=coffee["id"], points=10)
    assert decay["memory_id"] == coffee["id"] and len(decay["decay_curve"]) == 10
    strengths = [p["strength"] for p in decay["decay_curve"]]
    assert strengths == sorted(strengths, reverse=True)
    assert 0 < decay["current_strength"] <= 1 and decay["decay_params"]["beta"] == 1.3
    _error(alice.http.get("/v1/stats/decay"), 400, "validation_error")
    _error(alice.http.get("/v1/stats/decay", params={"memory_id": "nope"}), 404, "not_found")


def test_relations_spaces_sharing_agents(alice: TenantClient, bob: TenantClient) -> None:
    coffee, team = _seed(alice)
    relations = _get(alice, "/v1/stats/relations")
    assert relations["total_nodes"] == 3 and relations["total_edges"] == 0
    spaces = _get(alice, "/v1/stats/spaces")
    assert spaces["total_spaces"] == 2
    shared = next(s for s in spaces["spaces"] if s["space_id"] == team["id"])
    assert shared["memory_count"] == 1 and shared["shared_in_count"] == 1
    assert shared["members"] == [{"user_id": alice.id, "role": "admin", "status": "active"}]
    sharing = _get(alice, "/v1/stats/sharing")
    assert sharing["summary"]["total_shares"] == 1 and sharing["summary"]["unique_sharers"] == 1
    event = sharing["recent_activity"][0]
    assert event["memory_id"] == coffee["id"] and event["to_space"] == team["id"]
    assert sharing["flow_graph"]["edges"] == [
        {"from": f"personal/{alice.id}", "to": team["id"], "count": 1}
    ]
    agents = _get(alice, "/v1/stats/agents")
    assert {a["agent_id"]: a["total_memories"] for a in agents["agents"]} == {"": 2, "agent-a": 2}
    # none of it shows to another tenant
    assert _get(bob, "/v1/stats/sharing")["recent_activity"] == []
    assert _get(bob, "/v1/stats/spaces")["total_spaces"] == 1
    assert team["id"] not in str(_get(bob, "/v1/stats/agents"))
    assert _get(alice, f"/v1/spaces/{quote(team['id'], safe='')}")["id"] == team["id"]


def test_an_agent_counts_only_what_it_may_see(alice: TenantClient) -> None:
    """Another agent's own scope stays out of an agent's figures, as out of its searches:
    no counts, no tags, no labels in the graph, no decay. A shared copy is global."""
    post = alice.http.post
    secret = post(
        "/v1/memories",
        json={"content": "Agent A keeps the launch codes", "tags": ["secret"], "scope": "agent/a"},
        headers={"X-Agent-Id": "a"},
    ).json()
    office = post("/v1/memories", json={"content": "Everyone may know the office is in Lyon"})
    team = post("/v1/spaces", json={"name": "T", "space_type": "team"}).json()
    shared = post(f"/v1/memories/{office.json()['id']}/share", json={"target_space": team["id"]})
    assert shared.is_success, shared.text

    def stats(path: str, agent: str | None, **params: Any) -> Any:
        headers = {"X-Agent-Id": agent} if agent else {}
        response = alice.http.get(path, params=params, headers=headers)
        assert response.status_code == 200, response.text
        return response.json()

    owner, a, b = (stats("/v1/stats", who) for who in (None, "a", "b"))
    assert owner["total"] == a["total"] == 3 and b["total"] == 2
    assert a["by_agent"] == {"a": 1, "": 2} and b["by_agent"] == {"": 2}
    assert sum(day["count"] for day in b["timeline"]) == 2
    assert "secret" in str(stats("/v1/stats/tags", "a"))
    assert "secret" not in str(stats("/v1/stats/tags", "b"))
    assert "launch codes" in str(stats("/v1/stats/relations", "a"))
    assert "launch codes" not in str(stats("/v1/stats/relations", "b"))
    memory_counts = {
        s["space_id"]: s["memory_count"] for s in stats("/v1/stats/spaces", "b")["spaces"]
    }
    assert memory_counts == {f"personal/{alice.id}": 1, team["id"]: 1}
    listed = alice.http.get("/v1/memories", headers={"X-Agent-Id": "b"}).json()
    assert listed["total_count"] == 1  # what the agent counts is what it can list
    assert [row["agent_id"] for row in stats("/v1/stats/agents", "b")["agents"]] == [""]
    assert stats("/v1/stats/sharing", "b")["summary"]["total_shares"] == 1
    assert stats("/v1/stats/decay", "a", memory_id=secret["id"])["memory_id"] == secret["id"]
    hidden = alice.http.get(
        "/v1/stats/decay", params={"memory_id": secret["id"]}, headers={"X-Agent-Id": "b"}
    )
    _error(hidden, 404, "not_found")
