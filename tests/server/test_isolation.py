"""Tenant isolation, route by route: bob's key never reaches alice's memories or spaces.

DESIGN: 401 for a missing, unknown or revoked key; 403 for a known key without the
role; 404 for what the caller may not see (another tenant's memories and spaces).
Every response of every client here is checked for a stack trace and a 5xx.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import quote

import httpx
import pytest

ERROR_CODES = {401: "unauthorized", 403: "forbidden", 404: "not_found"}
SESSION = "same-session-id"  # both tenants use it: sessions must not meet across tenants


class Tenant(Protocol):
    id: str
    key: str
    http: httpx.Client


def q(space_id: str) -> str:
    return quote(space_id, safe="")


def _no_traceback(response: httpx.Response) -> None:
    response.read()
    where = f"{response.request.method} {response.request.url}"
    assert "Traceback" not in response.text, f"{where}: {response.text}"
    assert response.status_code < 500, f"{where}: {response.status_code} {response.text}"


def client(base: httpx.Client, key: str | None) -> httpx.Client:
    headers = {} if key is None else {"X-API-Key": key}
    http = httpx.Client(base_url=base.base_url, headers=headers, timeout=30)
    http.event_hooks["response"].append(_no_traceback)
    return http


def check(response: httpx.Response, status: int) -> Any:
    """The status, and the JSON error shape on an error; returns the JSON body."""
    where = f"{response.request.method} {response.request.url}"
    assert response.status_code == status, f"{where}: {response.status_code} {response.text}"
    body = response.json()
    if status >= 400:
        assert set(body) == {"error"} and set(body["error"]) == {"code", "message"}, body
        assert body["error"]["code"] == ERROR_CODES[status], body
        assert isinstance(body["error"]["message"], str) and body["error"]["message"]
    return body


@dataclass
class Data:
    t: Tenant
    words: tuple[str, str]  # in this tenant's memories only
    tag: str
    memory_ids: list[str]  # direct memories
    turn_ids: list[str]  # the conversation's turns
    task_id: str
    team: str
    copy_id: str  # memory_ids[0] shared into team
    rule_id: str
    key_id: str
    key: str

    @property
    def personal(self) -> str:
        return f"personal/{self.t.id}"

    @property
    def ids(self) -> list[str]:
        return [*self.memory_ids, *self.turn_ids, self.copy_id]

    @property
    def secrets(self) -> list[str]:
        """Strings no response to another tenant may contain."""
        keys = [self.t.id, self.t.key, self.key_id, self.key, self.task_id, self.rule_id]
        return [*keys, self.team, *self.ids, *self.words, self.tag]

    def assert_absent_from(self, text: str) -> None:
        leaked = [s for s in self.secrets if s in text]
        assert not leaked, f"leaked {leaked} in {text[:800]}"


def make_data(t: Tenant, name: str, w1: str, w2: str) -> Data:
    t.http.event_hooks["response"].append(_no_traceback)
    tag, http = f"{name}-secret", t.http
    ids = [
        check(http.post("/v1/memories", json={"content": text, "tags": [tag]}), 201)["id"]
        for text in (f"The {w1} vault code is {w2}-7731", f"I prefer {w1} tea with {w2} honey")
    ]
    messages = [
        {"role": "user", "content": f"My {w1} passport number is {w2}-4411"},
        {"role": "assistant", "content": f"Noted your {w1} passport."},
    ]
    body = {"messages": messages, "mode": "raw", "session_id": SESSION}
    ingest = check(http.post("/v1/memories", json=body), 202)
    team = check(http.post("/v1/spaces", json={"name": f"{name} team", "space_type": "team"}), 201)
    copy = check(http.post(f"/v1/memories/{ids[0]}/share", json={"target_space": team["id"]}), 201)
    rule_body = {"source_space": f"personal/{t.id}", "tags": [tag]}
    rule = check(http.post(f"/v1/spaces/{q(team['id'])}/auto-share-rules", json=rule_body), 201)
    key = check(http.post("/v1/keys", json={"name": f"{name}-second"}), 201)
    assert len(ingest["memory_ids"]) == 2
    return Data(
        t, (w1, w2), tag, ids, ingest["memory_ids"], ingest["task_id"], team["id"], copy["id"],
        rule["id"], key["id"], key["api_key"],
    )  # fmt: skip


World = tuple[Data, Data]


@pytest.fixture
def world(alice: Tenant, bob: Tenant) -> World:
    a = make_data(alice, "alice", "zanzibar", "quokka")
    return a, make_data(bob, "bob", "tamarind", "walrus")


def test_memory_reads_and_writes_are_404(world: World) -> None:
    a, b = world
    for memory_id in a.ids:
        before = check(a.t.http.get(f"/v1/memories/{memory_id}"), 200)
        for path in (f"/v1/memories/{memory_id}", f"/v1/memories/{memory_id}/history"):
            check(b.t.http.get(path), 404)
        check(b.t.http.get(f"/v1/memories/{memory_id}", params={"check_stale": "true"}), 404)
        for change in ({"content": "bob was here"}, {"tags": ["bob"]}, {"state": "deleted"}, {}):
            check(b.t.http.put(f"/v1/memories/{memory_id}", json=change), 404)
        check(b.t.http.delete(f"/v1/memories/{memory_id}"), 404)
        after = check(a.t.http.get(f"/v1/memories/{memory_id}"), 200)
        assert after == before, "bob's refused writes changed alice's memory"
        assert after["state"] == "active"


def test_bulk_deletes_touch_only_the_callers_memories(world: World) -> None:
    a, b = world
    before = check(a.t.http.get("/v1/stats"), 200)
    body = check(b.t.http.post("/v1/memories/batch-delete", json={"memory_ids": a.ids}), 200)
    assert body == {"deleted": 0, "mode": "ids"}
    by_tag: dict[str, Any] = {"filter": {"tags": [a.tag]}}
    dry_run = check(b.t.http.post("/v1/memories/batch-delete", json=by_tag), 200)
    assert dry_run == {"would_delete": 0}
    body = check(b.t.http.post("/v1/memories/batch-delete", json={**by_tag, "confirm": True}), 200)
    assert body["deleted"] == 0
    for f in ({"memory_type": "session"}, {"state": "active"}, {"category": "preferences"}):
        body = check(b.t.http.post("/v1/memories/batch-delete", json={"filter": f}), 200)
        assert body["would_delete"] <= len(b.memory_ids) + len(b.turn_ids), body
    gone = check(b.t.http.delete("/v1/memories/all", headers={"X-Confirm": "delete-all"}), 200)
    assert gone["deleted"] == len(b.memory_ids) + len(b.turn_ids)
    assert check(a.t.http.get("/v1/stats"), 200)["total"] == before["total"] == len(a.ids)
    for memory_id in a.ids:
        assert check(a.t.http.get(f"/v1/memories/{memory_id}"), 200)["state"] == "active"
    turns = check(a.t.http.get("/v1/memories", params={"memory_type": "session"}), 200)
    assert {m["id"] for m in turns["memories"]} == set(a.turn_ids)


LIST_PARAMS: list[dict[str, str]] = [
    *({"memory_type": t} for t in ("session", "pinned", "insight")),
    *({"state": t} for t in ("active", "deleted", "archived")),
    *({"category": t} for t in ("preferences", "profile")),
    {},
    {"tier": "peripheral"},
    {"limit": "1000", "sort": "updated_at", "order": "asc"},
]


def test_list_and_search_never_show_the_other_tenant(world: World) -> None:
    a, b = world
    query = f"{a.words[0]} {a.words[1]} vault passport tea"
    found = check(a.t.http.get("/v1/memories/search", params={"q": query}), 200)
    assert {r["memory"]["id"] for r in found["results"]} & set(a.ids)  # a real control
    for params in [*LIST_PARAMS, {"tags": a.tag}]:
        text = b.t.http.get("/v1/memories", params=params).text
        a.assert_absent_from(text)
        assert {m["id"] for m in json.loads(text)["memories"]} <= set(b.ids)
    assert check(b.t.http.get("/v1/memories", params={"tags": a.tag}), 200)["total_count"] == 0
    extras = [{}, {"space": "all"}, {"space": b.team}, {"memory_type": "session"}]
    extras += [{"session_id": SESSION}, {"tags": a.tag}, {"check_stale": "true"}]
    for extra in [*extras, {"include_trace": "true"}]:
        params = {"q": query, "limit": "1000", "min_score": "0", **extra}
        body = check(b.t.http.get("/v1/memories/search", params=params), 200)
        a.assert_absent_from(json.dumps(body))
        assert {r["memory"]["id"] for r in body["results"]} <= set(b.ids)
    legacy = a.team.replace("team/", "team:")
    for space in (a.team, a.personal, f"{b.team},{a.team}", legacy):
        check(b.t.http.get("/v1/memories/search", params={"q": query, "space": space}), 404)


def test_spaces_of_the_other_tenant_are_404(world: World) -> None:
    a, b = world
    listed = check(b.t.http.get("/v1/spaces"), 200)
    assert {s["id"] for s in listed["spaces"]} == {b.personal, b.team}
    a.assert_absent_from(json.dumps(listed))
    http, team = b.t.http, f"/v1/spaces/{q(a.team)}"
    rules = f"{team}/auto-share-rules"
    for space in (a.team, a.personal):
        check(http.get(f"/v1/spaces/{q(space)}"), 404)
    check(http.put(team, json={"name": "bob's now"}), 404)
    check(http.delete(team), 404)
    check(http.post(f"{team}/members", json={"user_id": b.t.id, "role": "admin"}), 404)
    check(http.put(f"{team}/members/{b.t.id}", json={"role": "admin"}), 404)
    check(http.put(f"{team}/members/{a.t.id}", json={"role": "reader"}), 404)
    check(http.delete(f"{team}/members/{a.t.id}"), 404)
    check(http.get(rules), 404)
    check(http.post(rules, json={"source_space": b.personal}), 404)
    check(http.delete(f"{rules}/{a.rule_id}"), 404)
    # a rule of bob's own team may not feed on alice's spaces
    own_rules = f"/v1/spaces/{q(b.team)}/auto-share-rules"
    for source in (a.personal, a.team):
        check(http.post(own_rules, json={"source_space": source}), 404)
    # alice's rule id under bob's own team: not his to delete
    check(http.delete(f"{own_rules}/{a.rule_id}"), 404)
    space = check(a.t.http.get(team), 200)
    assert space["name"] == "alice team"
    assert [m["user_id"] for m in space["members"]] == [a.t.id]
    assert [r["id"] for r in check(a.t.http.get(rules), 200)] == [a.rule_id]


def test_sharing_routes_refuse_the_other_tenants_memories(world: World) -> None:
    a, b = world
    http = b.t.http
    for memory_id in a.ids:
        for target in (b.team, a.team):
            share = {"target_space": target}
            check(http.post(f"/v1/memories/{memory_id}/share", json=share), 404)
            check(http.post(f"/v1/memories/{memory_id}/unshare", json=share), 404)
            check(http.post(f"/v1/memories/{memory_id}/reshare", json=share), 404)
        check(http.post(f"/v1/memories/{memory_id}/reshare"), 404)
        for source in (a.team, a.personal, b.team, b.personal):
            pull = {"source_space": source}
            check(http.post(f"/v1/memories/{memory_id}/pull", json=pull), 404)
        to_user = {"target_user": a.t.id}
        check(http.post(f"/v1/memories/{memory_id}/share-to-user", json=to_user), 404)
    # bob's own memories may not go into alice's team either
    check(http.post(f"/v1/memories/{b.memory_ids[1]}/share", json={"target_space": a.team}), 404)
    check(http.post(f"/v1/memories/{b.copy_id}/reshare", json={"target_space": a.team}), 404)
    check(http.post("/v1/memories/share-all", json={"target_space": a.team}), 404)
    batch = {"memory_ids": a.ids, "target_space": b.team}
    body = check(http.post("/v1/memories/batch-share", json=batch), 200)
    assert body["succeeded"] == []
    assert [f["memory_id"] for f in body["failed"]] == a.ids
    batch = {"memory_ids": b.memory_ids, "target_space": a.team}
    check(http.post("/v1/memories/batch-share", json=batch), 404)
    org = check(a.t.http.post("/v1/org/setup", json={"name": "alice org", "members": []}), 201)
    for org_id in (org["space_id"], org["space_id"].replace("org/", "org:")):
        publish = f"/v1/org/{q(org_id)}/publish"
        check(http.post(publish, json={"memory_ids": b.memory_ids}), 404)
        check(http.post(publish, json={"auto_share_rule": {"min_importance": 0.0}}), 404)
    # nothing moved: alice's team holds her one copy, her org nothing, bob's team his one copy
    stats = {
        s: check(a.t.http.get("/v1/stats", params={"space": s}), 200)
        for s in (a.team, org["space_id"])
    }
    assert (stats[a.team]["total"], stats[org["space_id"]]["total"]) == (1, 0)
    mine = check(http.get("/v1/stats", params={"space": b.team}), 200)
    assert mine["total"] == 1
    a.assert_absent_from(json.dumps(mine))


def test_tasks_and_decay_of_the_other_tenant_are_404(world: World) -> None:
    a, b = world
    check(b.t.http.get(f"/v1/tasks/{a.task_id}"), 404)
    assert check(a.t.http.get(f"/v1/tasks/{a.task_id}"), 200)["id"] == a.task_id
    assert check(b.t.http.get(f"/v1/tasks/{b.task_id}"), 200)["id"] == b.task_id
    for memory_id in a.ids:
        check(b.t.http.get("/v1/stats/decay", params={"memory_id": memory_id}), 404)
    check(b.t.http.get("/v1/stats/decay", params={"memory_id": b.memory_ids[0]}), 200)


def test_stats_show_only_the_callers_spaces(world: World) -> None:
    a, b = world
    http = b.t.http
    for path in ("", "/tags", "/spaces", "/agents", "/relations", "/sharing", "/config"):
        a.assert_absent_from(json.dumps(check(http.get(f"/v1/stats{path}"), 200)))
    overview = check(http.get("/v1/stats", params={"space": "all"}), 200)
    assert overview["total"] == len(b.ids)
    assert set(overview["by_space"]) <= {b.personal, b.team, "default"}
    tags = check(http.get("/v1/stats/tags"), 200)
    assert {t["name"] for t in tags["tags"]} == {b.tag}
    spaces = check(http.get("/v1/stats/spaces"), 200)
    assert {s["space_id"] for s in spaces["spaces"]} == {b.personal, b.team}
    nodes = check(http.get("/v1/stats/relations"), 200)["nodes"]
    assert {n["id"] for n in nodes} <= set(b.ids)
    assert check(http.get("/v1/stats/sharing"), 200)["summary"]["total_shares"] == 1
    agents = check(http.get("/v1/stats/agents"), 200)
    assert sum(x["total_memories"] for x in agents["agents"]) == len(b.ids)
    for space in (a.team, a.personal, f"{b.team},{a.team}"):
        check(http.get("/v1/stats", params={"space": space}), 404)
        check(http.get("/v1/stats/tags", params={"space": space}), 404)


def test_profile_keys_and_export_are_the_callers_own(world: World) -> None:
    a, b = world
    own = check(a.t.http.get("/v1/profile"), 200)
    assert any(a.words[0] in fact for fact in own["static_facts"])  # a real control
    for params in ({}, {"q": f"{a.words[0]} {a.words[1]}"}):
        a.assert_absent_from(json.dumps(check(b.t.http.get("/v1/profile", params=params), 200)))
    keys = check(b.t.http.get("/v1/keys"), 200)["keys"]
    assert len(keys) == 2 and b.key_id in {k["id"] for k in keys}
    assert {k["tenant_id"] for k in keys} == {b.t.id}
    a.assert_absent_from(json.dumps(keys))
    alice_keys = check(a.t.http.get("/v1/keys"), 200)["keys"]
    for key in alice_keys:
        check(b.t.http.delete(f"/v1/keys/{key['id']}"), 404)
    assert all(k["revoked_at"] is None for k in check(a.t.http.get("/v1/keys"), 200)["keys"])
    with client(a.t.http, a.key) as second:
        check(second.get("/v1/memories"), 200)
    check(a.t.http.get("/v1/memories"), 200)
    export = b.t.http.get("/v1/export")
    assert export.status_code == 200
    a.assert_absent_from(export.text)
    lines = [json.loads(line) for line in export.text.splitlines() if line]
    assert {x["memory"]["id"] for x in lines if x["type"] == "memory"} <= set(b.ids)
    assert {x["content"] for x in lines if x["type"] == "message"} <= {
        f"My {b.words[0]} passport number is {b.words[1]}-4411",
        f"Noted your {b.words[0]} passport.",
    }


def unrecalled(memory: dict[str, Any]) -> dict[str, Any]:
    """A memory without what bob's searches above update in the background (recall counts)."""
    return {
        k: v
        for k, v in memory.items()
        if k not in ("access_count", "last_accessed_at", "confidence")
    }


def test_membership_is_what_grants_access(world: World) -> None:
    a, b = world
    team = f"/v1/spaces/{q(a.team)}"
    query = {"q": f"{a.words[0]} vault code {a.words[1]}", "limit": "50", "min_score": "0"}
    member = {"user_id": b.t.id, "role": "reader"}
    added = check(a.t.http.post(f"{team}/members", json=member), 200)
    assert {m["user_id"]: m["role"] for m in added["members"]}[b.t.id] == "reader"
    # invited is not a member: nothing of the space reaches bob until he accepts
    check(b.t.http.get(team), 404)
    found = check(b.t.http.get("/v1/memories/search", params=query), 200)
    assert a.copy_id not in {r["memory"]["id"] for r in found["results"]}
    check(b.t.http.get(f"/v1/memories/{a.copy_id}"), 404)
    check(b.t.http.post(f"/v1/invitations/{q(a.team)}/accept"), 200)
    assert check(b.t.http.get(team), 200)["id"] == a.team
    assert a.team in {s["id"] for s in check(b.t.http.get("/v1/spaces"), 200)["spaces"]}
    for extra in ({}, {"space": a.team}):
        found = check(b.t.http.get("/v1/memories/search", params={**query, **extra}), 200)
        ids = {r["memory"]["id"] for r in found["results"]}
        assert a.copy_id in ids and not ids & {*a.memory_ids, *a.turn_ids}
    check(b.t.http.get(f"/v1/memories/{a.copy_id}"), 200)
    check(b.t.http.get(f"{team}/auto-share-rules"), 200)
    # a reader reads, and writes nothing
    share = {"target_space": a.team}
    check(b.t.http.post(f"/v1/memories/{b.memory_ids[1]}/share", json=share), 403)
    batch = {"memory_ids": b.memory_ids, "target_space": a.team}
    check(b.t.http.post("/v1/memories/batch-share", json=batch), 403)
    check(b.t.http.put(team, json={"name": "bob's now"}), 403)
    check(b.t.http.delete(team), 403)
    check(b.t.http.post(f"{team}/members", json={"user_id": b.t.id, "role": "admin"}), 403)
    check(b.t.http.put(f"{team}/members/{b.t.id}", json={"role": "admin"}), 403)
    check(b.t.http.post(f"{team}/auto-share-rules", json={"source_space": b.personal}), 403)
    check(b.t.http.delete(f"{team}/auto-share-rules/{a.rule_id}"), 403)
    copy = f"/v1/memories/{a.copy_id}"
    before = unrecalled(check(a.t.http.get(copy), 200))
    for refused in (b.t.http.put(copy, json={"content": "x"}), b.t.http.delete(copy)):
        assert refused.status_code == 404, refused.text  # not a reader's to change: not found
        check(refused, refused.status_code)
    assert unrecalled(check(a.t.http.get(copy), 200)) == before
    # membership withdrawn: back to 404
    check(a.t.http.delete(f"{team}/members/{b.t.id}"), 200)
    check(b.t.http.get(team), 404)
    check(b.t.http.get(f"/v1/memories/{a.copy_id}"), 404)
    check(b.t.http.get("/v1/memories/search", params={**query, "space": a.team}), 404)
    found = check(b.t.http.get("/v1/memories/search", params=query), 200)
    a.assert_absent_from(json.dumps(found))


def test_import_cannot_reach_the_other_tenants_ids(world: World) -> None:
    a, b = world
    header = b.t.http.get("/v1/export").text.splitlines()[0]
    before = check(a.t.http.get(f"/v1/memories/{a.memory_ids[0]}"), 200)
    forged = {**before, "content": "imported by bob", "tags": ["forged"]}
    forged["provenance"] = {
        "shared_from_space": a.personal,
        "shared_from_memory": a.memory_ids[1],
        "shared_by_user": a.t.id,
        "shared_by_agent": "",
        "shared_at": before["created_at"],
        "original_created_at": before["created_at"],
        "source_version": 1,
    }
    message = {"session_id": SESSION, "role": "user", "content": "bob's line"}
    lines = [
        header,
        json.dumps({"type": "memory", "memory": forged}),
        json.dumps({"type": "message", **message, "memory_id": a.turn_ids[0]}),
    ]
    response = b.t.http.post(
        "/v1/import",
        content="\n".join(lines) + "\n",
        headers={"Content-Type": "application/x-ndjson"},
    )
    assert check(response, 200)["imported"] == 1
    assert check(a.t.http.get(f"/v1/memories/{a.memory_ids[0]}"), 200) == before
    check(b.t.http.get(f"/v1/memories/{a.memory_ids[0]}"), 404)
    mine = check(b.t.http.get("/v1/memories", params={"tags": "forged"}), 200)["memories"]
    assert len(mine) == 1 and mine[0]["id"] not in a.ids
    assert (mine[0]["tenant_id"], mine[0]["space_id"]) != (a.t.id, a.personal)
    stale = check(
        b.t.http.get(f"/v1/memories/{mine[0]['id']}", params={"check_stale": "true"}), 200
    )
    assert stale["stale_info"]["current_source_version"] is None  # alice's version stays hidden
    check(
        b.t.http.post(f"/v1/memories/{mine[0]['id']}/reshare", json={"target_space": b.team}), 404
    )
    turns = check(a.t.http.get("/v1/memories", params={"memory_type": "session"}), 200)
    assert {m["id"] for m in turns["memories"]} == set(a.turn_ids)


def test_same_session_and_text_are_stored_per_tenant(world: World) -> None:
    a, b = world
    messages = [
        {"role": "user", "content": f"My {a.words[0]} passport number is {a.words[1]}-4411"}
    ]
    body = {"messages": messages, "mode": "raw", "session_id": SESSION}
    assert check(b.t.http.post("/v1/memories", json=body), 202)["stored_count"] == 1
    assert check(a.t.http.post("/v1/memories", json=body), 202)["stored_count"] == 0
    turns = check(a.t.http.get("/v1/memories", params={"memory_type": "session"}), 200)
    assert {m["id"] for m in turns["memories"]} == set(a.turn_ids)


def test_revoked_and_unknown_keys_get_401(bob: Tenant, make_tenant: Callable[..., Tenant]) -> None:
    bob.http.event_hooks["response"].append(_no_traceback)
    made = check(bob.http.post("/v1/keys", json={"name": "short-lived"}), 201)
    with client(bob.http, made["api_key"]) as short:
        check(short.get("/v1/memories"), 200)
        revoked = check(bob.http.delete(f"/v1/keys/{made['id']}"), 200)
        assert revoked["revoked_at"] is not None
        for path in ("/v1/memories", "/v1/keys", "/v1/spaces", "/v1/stats"):
            check(short.get(path), 401)
        check(short.post("/v1/memories", json={"content": "after revocation"}), 401)
    for key in (None, "", "mk_" + "x" * 43, made["id"], bob.id):
        with client(bob.http, key) as stranger:
            check(stranger.get("/v1/memories"), 401)
            check(stranger.get(f"/v1/spaces/{q('personal/' + bob.id)}"), 401)
    other = make_tenant("carol")
    check(other.http.get("/v1/memories"), 200)
    check(bob.http.get("/v1/memories"), 200)  # the tenant's other key still works
