"""Spaces, members, auto-share rules and every sharing route (reference §4.16–4.17)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import httpx
from server_harness import accept_invitation

if TYPE_CHECKING:
    from server_harness import RunningServer, TenantClient


def enc(space_id: str) -> str:
    """A space id as the clients put it in a path (``encodeURIComponent``)."""
    return quote(space_id, safe="")


def _ok(response: httpx.Response, status: int = 200) -> Any:
    assert response.status_code == status, response.text
    return response.json()


def _error(response: httpx.Response, status: int, code: str, words: str = "") -> None:
    assert response.status_code == status, response.text
    assert response.json()["error"]["code"] == code
    assert words in response.json()["error"]["message"]


def _team(owner: TenantClient, name: str = "Team", **body: Any) -> dict[str, Any]:
    created: dict[str, Any] = _ok(
        owner.http.post("/v1/spaces", json={"name": name, "space_type": "team", **body}), 201
    )
    return created


def _memory(owner: TenantClient, content: str, **fields: Any) -> dict[str, Any]:
    made: dict[str, Any] = _ok(
        owner.http.post("/v1/memories", json={"content": content, **fields}), 201
    )
    return made


def test_space_lifecycle(alice: TenantClient, bob: TenantClient, server: RunningServer) -> None:
    team = _team(alice, members=[{"user_id": bob.id, "role": "reader"}])
    assert team["id"].startswith("team/") and team["space_type"] == "team"
    assert team["owner_id"] == alice.id
    assert {(m["user_id"], m["role"], m["status"]) for m in team["members"]} == {
        (alice.id, "admin", "active"),
        (bob.id, "reader", "invited"),
    }
    accept_invitation(bob, team["id"])
    listed = _ok(alice.http.get("/v1/spaces"))["spaces"]
    assert [s["space_type"] for s in listed] == ["personal", "team"]
    assert _ok(bob.http.get(f"/v1/spaces/{enc(team['id'])}"))["name"] == "Team"
    # the legacy ``team:<uuid>`` form names the same space
    legacy = team["id"].replace("/", ":", 1)
    assert _ok(alice.http.get(f"/v1/spaces/{legacy}"))["id"] == team["id"]
    renamed = _ok(alice.http.put(f"/v1/spaces/{enc(team['id'])}", json={"name": "Crew"}))
    assert renamed["name"] == "Crew"
    _error(bob.http.put(f"/v1/spaces/{enc(team['id'])}", json={"name": "X"}), 403, "forbidden")
    _error(bob.http.delete(f"/v1/spaces/{enc(team['id'])}"), 403, "forbidden")
    note = _memory(alice, "A note for the crew")
    copy = _ok(
        alice.http.post(f"/v1/memories/{note['id']}/share", json={"target_space": team["id"]}), 201
    )
    assert _ok(alice.http.delete(f"/v1/spaces/{enc(team['id'])}")) == {"status": "deleted"}
    _error(alice.http.get(f"/v1/spaces/{enc(team['id'])}"), 404, "not_found")
    _error(bob.http.get(f"/v1/memories/{copy['id']}"), 404, "not_found")
    # the space's memories are soft-deleted with a history row, like any deletion
    history = server.service.store.history(copy["id"])
    assert [h["action"] for h in history] == ["create", "state:deleted"]


def test_space_errors(alice: TenantClient) -> None:
    post = alice.http.post
    _error(post("/v1/spaces", json={"name": "", "space_type": "team"}), 400, "validation_error")
    _error(post("/v1/spaces", json={"name": "x", "space_type": "club"}), 400, "validation_error")
    _error(
        post("/v1/spaces", json={"name": "x", "space_type": "personal"}), 400, "validation_error"
    )
    _error(post("/v1/spaces", json={"name": "x"}), 422, "validation_error")
    bad_member = {
        "name": "x",
        "space_type": "team",
        "members": [{"user_id": "ghost", "role": "member"}],
    }
    _error(post("/v1/spaces", json=bad_member), 404, "not_found", "tenant ghost")
    personal = f"personal/{alice.id}"
    _error(alice.http.delete(f"/v1/spaces/{enc(personal)}"), 400, "validation_error")
    _error(alice.http.get("/v1/spaces/team%2Fnothing"), 404, "not_found")
    _error(
        alice.http.put(f"/v1/spaces/{enc(personal)}", json={"name": ""}), 400, "validation_error"
    )


def test_members(alice: TenantClient, bob: TenantClient, make_tenant: Any) -> None:
    carol = make_tenant("carol")
    team = _team(alice)
    path = f"/v1/spaces/{enc(team['id'])}/members"
    added = _ok(alice.http.post(path, json={"user_id": bob.id, "role": "member"}))
    assert (bob.id, "member") in {(m["user_id"], m["role"]) for m in added["members"]}
    accept_invitation(bob, team["id"])
    _error(
        alice.http.post(path, json={"user_id": bob.id, "role": "member"}), 400, "validation_error"
    )
    _error(
        alice.http.post(path, json={"user_id": carol.id, "role": "boss"}), 400, "validation_error"
    )
    _error(bob.http.post(path, json={"user_id": carol.id, "role": "reader"}), 403, "forbidden")
    changed = _ok(alice.http.put(f"{path}/{bob.id}", json={"role": "admin"}))
    assert (bob.id, "admin") in {(m["user_id"], m["role"]) for m in changed["members"]}
    # now an admin, bob may add carol
    _ok(bob.http.post(path, json={"user_id": carol.id, "role": "reader"}))
    accept_invitation(carol, team["id"])
    _error(alice.http.delete(f"{path}/{alice.id}"), 400, "validation_error", "owner")
    _error(alice.http.delete(f"{path}/nobody"), 404, "not_found")
    _error(alice.http.put(f"{path}/nobody", json={"role": "reader"}), 404, "not_found")
    left = _ok(alice.http.delete(f"{path}/{carol.id}"))
    assert carol.id not in {m["user_id"] for m in left["members"]}
    _error(carol.http.get(f"/v1/spaces/{enc(team['id'])}"), 404, "not_found")


def test_share_pull_unshare_reshare(alice: TenantClient, bob: TenantClient) -> None:
    team = _team(alice, members=[{"user_id": bob.id, "role": "member"}])
    accept_invitation(bob, team["id"])
    note = _memory(alice, "Deploys happen on Tuesdays", tags=["ops"])
    share = f"/v1/memories/{note['id']}/share"
    copy = _ok(alice.http.post(share, json={"target_space": team["id"]}), 201)
    assert copy["id"] != note["id"] and copy["space_id"] == team["id"]
    assert copy["provenance"]["shared_from_memory"] == note["id"]
    assert copy["provenance"]["shared_by_user"] == alice.id and copy["version"] == 1
    assert _ok(alice.http.post(share, json={"target_space": team["id"]}))["id"] == copy["id"]
    # bob finds it through search, across his spaces, weighted below his own memories
    # (a team's weight, 0.8, and half again for what someone else shared)
    found = _ok(bob.http.get("/v1/memories/search", params={"q": "when are deploys"}))
    assert found["results"][0]["memory"]["id"] == copy["id"]
    assert found["results"][0]["score"] == 0.4
    # and pulls it into his personal space
    pulled = _ok(
        bob.http.post(f"/v1/memories/{copy['id']}/pull", json={"source_space": team["id"]}), 201
    )
    assert pulled["space_id"] == f"personal/{bob.id}" and pulled["visibility"] == "private"
    # the source changes: the copy is stale, a reshare refreshes it
    alice.http.put(f"/v1/memories/{note['id']}", json={"content": "Deploys happen on Wednesdays"})
    stale = _ok(alice.http.get(f"/v1/memories/{copy['id']}", params={"check_stale": "true"}))
    assert stale["stale_info"] == {
        "is_stale": True,
        "source_version": 1,
        "current_source_version": 2,
        "source_deleted": False,
        "source_visible": True,
    }
    fresh = _ok(alice.http.post(f"/v1/memories/{copy['id']}/reshare", json={}))
    assert fresh["content"] == "Deploys happen on Wednesdays" and fresh["space_id"] == team["id"]
    assert _ok(alice.http.get(f"/v1/memories/{copy['id']}"))["state"] == "deleted"
    _error(alice.http.post(f"/v1/memories/{note['id']}/reshare", json={}), 400, "validation_error")
    # unsharing takes the live copy out of the space
    unshare = f"/v1/memories/{note['id']}/unshare"
    assert _ok(alice.http.post(unshare, json={"target_space": team["id"]})) == {
        "status": "unshared"
    }
    _error(alice.http.post(unshare, json={"target_space": team["id"]}), 404, "not_found")
    after = _ok(bob.http.get("/v1/memories/search", params={"q": "when are deploys"}))
    assert fresh["id"] not in [r["memory"]["id"] for r in after["results"]]


def test_sharing_permissions(alice: TenantClient, bob: TenantClient) -> None:
    team = _team(alice, members=[{"user_id": bob.id, "role": "reader"}])
    accept_invitation(bob, team["id"])
    mine = _memory(bob, "Bob's note about the build")
    _error(
        bob.http.post(f"/v1/memories/{mine['id']}/share", json={"target_space": team["id"]}),
        403,
        "forbidden",
        "read-only",
    )
    _error(
        bob.http.post(f"/v1/memories/{mine['id']}/share", json={"target_space": "team/none"}),
        404,
        "not_found",
    )
    _error(bob.http.post(f"/v1/memories/{mine['id']}/share", json={}), 422, "validation_error")
    _error(
        bob.http.post("/v1/memories/unknown/share", json={"target_space": team["id"]}),
        404,
        "not_found",
    )
    note = _memory(alice, "Alice's note")
    _ok(alice.http.post(f"/v1/memories/{note['id']}/share", json={"target_space": team["id"]}), 201)
    # a reader may not withdraw what someone else shared
    _error(
        bob.http.post(f"/v1/memories/{note['id']}/unshare", json={"target_space": team["id"]}),
        403,
        "forbidden",
    )
    _error(
        bob.http.post(f"/v1/memories/{note['id']}/pull", json={"source_space": "team/none"}),
        404,
        "not_found",
    )


def test_batch_and_share_all(alice: TenantClient) -> None:
    team = _team(alice)
    a = _memory(alice, "Runbook step one", tags=["ops"], importance=0.9, category="cases")
    b = _memory(alice, "Runbook step two", tags=["ops"], importance=0.2, category="cases")
    _memory(alice, "Favourite colour is green", tags=["me"])
    batch = _ok(
        alice.http.post(
            "/v1/memories/batch-share",
            json={"memory_ids": [a["id"], "missing"], "target_space": team["id"]},
        )
    )
    assert [m["provenance"]["shared_from_memory"] for m in batch["succeeded"]] == [a["id"]]
    assert batch["failed"][0]["memory_id"] == "missing"
    _error(
        alice.http.post(
            "/v1/memories/batch-share", json={"memory_ids": [], "target_space": team["id"]}
        ),
        400,
        "validation_error",
    )
    result = _ok(
        alice.http.post(
            "/v1/memories/share-all",
            json={"target_space": team["id"], "filters": {"tags": ["ops"]}},
        )
    )
    assert result == {"total": 2, "shared": 1, "skipped_existing": 1, "failed": 0}
    legacy = team["id"].replace("/", ":", 1)
    high = _ok(
        alice.http.post(
            "/v1/memories/share-all",
            json={"target_space": legacy, "filters": {"min_importance": 0.6}},
        )
    )
    assert high["total"] == 1 and b["id"] != a["id"]


def test_share_to_user(alice: TenantClient, bob: TenantClient) -> None:
    note = _memory(alice, "The wifi password is on the fridge")
    path = f"/v1/memories/{note['id']}/share-to-user"
    first = _ok(alice.http.post(path, json={"target_user": bob.id}), 201)
    assert first["space_created"] is True and first["space_id"].startswith("team/")
    again = _ok(alice.http.post(path, json={"target_user": bob.id}))
    assert again == {**first, "space_created": False}
    # bob sees nothing of it until he accepts the space alice made for the two of them
    _error(bob.http.get(f"/v1/memories/{first['shared_copy_id']}"), 404, "not_found")
    accept_invitation(bob, first["space_id"])
    seen = _ok(bob.http.get(f"/v1/memories/{first['shared_copy_id']}"))
    assert seen["content"] == note["content"]
    _error(alice.http.post(path, json={"target_user": alice.id}), 400, "validation_error")
    _error(alice.http.post(path, json={"target_user": "ghost"}), 404, "not_found")
    _memory(alice, "Another note for bob")
    everything = _ok(
        alice.http.post("/v1/memories/share-all-to-user", json={"target_user": bob.id})
    )
    assert everything["space_id"] == first["space_id"] and everything["space_created"] is False
    assert everything["shared"] == 1 and everything["skipped_existing"] == 1


def test_auto_share_rules(alice: TenantClient, bob: TenantClient) -> None:
    team = _team(alice, members=[{"user_id": bob.id, "role": "member"}])
    accept_invitation(bob, team["id"])
    rules = f"/v1/spaces/{enc(team['id'])}/auto-share-rules"
    rule = _ok(
        alice.http.post(
            rules,
            json={"source_space": f"personal/{alice.id}", "categories": ["cases"], "tags": ["ops"]},
        ),
        201,
    )
    assert _ok(bob.http.get(rules)) == [rule]
    _error(bob.http.post(rules, json={"source_space": f"personal/{bob.id}"}), 403, "forbidden")
    _error(alice.http.post(rules, json={"source_space": f"personal/{bob.id}"}), 404, "not_found")
    _error(alice.http.post(rules, json={}), 422, "validation_error")
    shared = _memory(alice, "Restart the queue worker first", category="cases", tags=["ops"])
    _memory(alice, "Lunch at noon", category="events", tags=["ops"])
    team_list = _ok(
        bob.http.get("/v1/memories/search", params={"q": "queue worker", "space": team["id"]})
    )
    assert [r["memory"]["provenance"]["shared_from_memory"] for r in team_list["results"]] == [
        shared["id"]
    ]
    lunch = _ok(bob.http.get("/v1/memories/search", params={"q": "lunch", "space": team["id"]}))
    assert "Lunch at noon" not in [r["memory"]["content"] for r in lunch["results"]]
    assert _ok(alice.http.delete(f"{rules}/{rule['id']}")) == {"status": "deleted"}
    _error(alice.http.delete(f"{rules}/{rule['id']}"), 404, "not_found")


def test_org_setup_and_publish(alice: TenantClient, bob: TenantClient) -> None:
    org = _ok(
        alice.http.post(
            "/v1/org/setup",
            json={
                "name": "Acme",
                "members": [{"user_id": bob.id, "role": "reader"}, {"user_id": "x", "role": "r"}],
            },
        ),
        201,
    )
    assert org["space_id"].startswith("org/") and org["members_added"] == 1
    assert org["failed_members"] == ["x"]
    accept_invitation(bob, org["space_id"])
    note = _memory(alice, "Expense reports are due monthly", category="patterns")
    publish = f"/v1/org/{enc(org['space_id'])}/publish"
    result = _ok(
        alice.http.post(
            publish,
            json={"memory_ids": [note["id"]], "auto_share_rule": {"categories": ["patterns"]}},
        )
    )
    assert result["published"] == 1 and result["auto_share_rule_id"]
    legacy = org["space_id"].replace("/", ":", 1)
    assert _ok(alice.http.post(f"/v1/org/{legacy}/publish", json={}))["published"] == 0
    _error(bob.http.post(publish, json={}), 403, "forbidden")
    team = _team(alice)
    _error(alice.http.post(f"/v1/org/{enc(team['id'])}/publish", json={}), 400, "validation_error")
    _error(alice.http.post("/v1/org/setup", json={"name": "x"}), 422, "validation_error")
    found = _ok(bob.http.get("/v1/memories/search", params={"q": "expense reports"}))
    # organization spaces weigh 0.6, and what someone else shared half of that
    assert found["results"][0]["score"] == 0.3
