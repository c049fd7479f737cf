"""Keys, tenant creation policy, and the JSON error for every kind of failure."""

from __future__ import annotations

import socket
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import pytest
from server_harness import RunningServer, start_server

from memoryd.embed.local import LocalEmbedder
from memoryd.errors import ValidationError
from memoryd.server import ServeOptions

if TYPE_CHECKING:
    from server_harness import TenantClient

ADMIN_KEY = "admin-secret-for-tests"


def _error(response: httpx.Response, status: int, code: str, words: str = "") -> None:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    error = response.json()["error"]
    assert error["code"] == code and words in error["message"], error
    assert "Traceback" not in response.text


def test_health_and_tenant_creation(server: RunningServer) -> None:
    with server.client() as anonymous:
        assert anonymous.get("/health").json() == {"status": "ok", "storage": "ok"}
        named = anonymous.post("/v1/tenants", json={"name": "team-bot"}).json()
        assert list(named)[:3] == ["id", "api_key", "status"] and named["name"] == "team-bot"
        assert named["api_key"].startswith("mk_") and named["api_key"] != named["id"]
        unnamed = anonymous.post("/v1/tenants").json()
        assert unnamed["name"] == f"tenant-{unnamed['id'][:8]}"
        _error(anonymous.post("/v1/tenants", json={"name": 5}), 422, "validation_error")
    # the tenant id is not a key
    with server.client(named["id"]) as by_id:
        _error(by_id.get("/v1/memories"), 401, "unauthorized", "invalid API key")


def test_missing_and_unknown_keys_are_401(server: RunningServer) -> None:
    with server.client() as anonymous:
        _error(anonymous.get("/v1/memories"), 401, "unauthorized", "missing X-API-Key")
        # auth comes before the body is even parsed
        _error(
            anonymous.post(
                "/v1/memories", content=b"{not json", headers={"content-type": "application/json"}
            ),
            401,
            "unauthorized",
        )
    with server.client("mk_wrong") as wrong:
        _error(wrong.get("/v1/spaces"), 401, "unauthorized", "invalid API key")


def test_keys_are_listed_made_and_revoked(alice: TenantClient, server: RunningServer) -> None:
    made = alice.http.post("/v1/keys", json={"name": "ci"})
    assert made.status_code == 201
    second = made.json()
    assert second["api_key"].startswith(second["prefix"]) and second["name"] == "ci"
    listed = alice.http.get("/v1/keys").json()["keys"]
    assert [k["name"] for k in listed] == ["default", "ci"]
    assert all("api_key" not in k and "key_hash" not in k for k in listed)
    assert alice.key not in alice.http.get("/v1/keys").text
    with server.client(second["api_key"]) as other:
        assert other.get("/v1/memories").status_code == 200
        revoked = alice.http.delete(f"/v1/keys/{second['id']}").json()
        assert revoked["revoked_at"] is not None
        _error(other.get("/v1/memories"), 401, "unauthorized")
    _error(alice.http.delete("/v1/keys/unknown"), 404, "not_found")
    assert alice.http.get("/v1/memories").status_code == 200  # the first key still works


def test_request_errors_are_json(alice: TenantClient) -> None:
    http = alice.http
    _error(
        http.post("/v1/memories", content=b"{oops", headers={"content-type": "application/json"}),
        400,
        "bad_request",
        "not valid JSON",
    )
    _error(
        http.post("/v1/memories", content=b"hello", headers={"content-type": "text/plain"}),
        415,
        "unsupported_media_type",
    )
    _error(http.post("/v1/memories", json=["a list"]), 422, "validation_error")
    _error(http.get("/v1/nowhere"), 404, "not_found", "no route")
    _error(http.get("/v1/memories/"), 404, "not_found")
    _error(http.patch("/v1/memories"), 405, "method_not_allowed")
    _error(http.get("/v1/memories", params={"offset": -1}), 400, "validation_error")


def test_oversized_bodies_are_refused(alice: TenantClient) -> None:
    big = b'{"content": "' + b"x" * (3 * 1024 * 1024) + b'"}'
    _error(
        alice.http.post("/v1/memories", content=big, headers={"content-type": "application/json"}),
        413,
        "payload_too_large",
    )

    def chunks() -> Iterator[bytes]:  # no Content-Length: counted while it streams
        yield b'{"content": "'
        for _ in range(48):
            yield b"y" * 65536
        yield b'"}'

    _error(
        alice.http.post(
            "/v1/memories", content=chunks(), headers={"content-type": "application/json"}
        ),
        413,
        "payload_too_large",
    )
    assert alice.http.get("/v1/memories").json()["total_count"] == 0


def test_import_routes_need_a_key_and_a_multipart_body(
    alice: TenantClient, server: RunningServer
) -> None:
    for method, path, status, code in (
        ("POST", "/v1/files", 400, "validation_error"),
        ("POST", "/v1/imports", 400, "validation_error"),
        ("GET", "/v1/imports/abc", 404, "not_found"),
        ("POST", "/v1/imports/abc/intelligence", 404, "not_found"),
        ("POST", "/v1/imports/abc/rollback", 404, "not_found"),
    ):
        _error(alice.http.request(method, path), status, code)
        with server.client() as anonymous:
            _error(anonymous.request(method, path), 401, "unauthorized")
    assert alice.http.get("/v1/imports").json() == {"imports": [], "total": 0}


def test_openapi_document_matches_the_routes(server: RunningServer) -> None:
    with server.client() as anonymous:
        spec = anonymous.get("/openapi.json").json()
        assert anonymous.get("/docs").status_code == 200
    paths = set(spec["paths"])
    for path in (
        "/health",
        "/v1/tenants",
        "/v1/keys",
        "/v1/memories",
        "/v1/memories/search",
        "/v1/memories/{memory_id}",
        "/v1/memories/batch-delete",
        "/v1/memories/all",
        "/v1/tasks/{task_id}",
        "/v1/profile",
        "/v1/stats",
        "/v1/stats/decay",
        "/v1/spaces/{space_id}/members",
        "/v1/memories/{memory_id}/share",
        "/v1/org/{org_id}/publish",
        "/v1/imports",
        "/v1/invitations",
        "/v1/invitations/{space_id}/accept",
        "/v1/invitations/{space_id}/decline",
        "/v1/spaces/{space_id}/leave",
    ):
        assert path in paths, path
    assert "requestBody" in spec["paths"]["/v1/memories"]["post"]
    # every operation says what it answers: a schema for its success status, and the wire
    # contract's error body (not FastAPI's 422 shape) for an error of memoryd's own
    for path, operations in spec["paths"].items():
        for method, operation in operations.items():
            answers = operation["responses"]
            success = [
                body["schema"]
                for status, answer in answers.items()
                if status.startswith("2")
                for body in answer.get("content", {}).values()
                if body.get("schema")
            ]
            assert success, f"{method.upper()} {path} declares no response schema"
            if path.startswith("/v1/memories"):
                error = answers["404"]["content"]["application/json"]["schema"]
                assert error == {"$ref": "#/components/schemas/ErrorBody"}, (method, path)
    page = spec["components"]["schemas"]["MemoryPage"]["properties"]
    assert {"memories", "total_count", "limit", "offset"} <= set(page)


def test_errors_inside_the_server_hide_their_trace(
    tmp_path: Path, embedder: LocalEmbedder, caplog: pytest.LogCaptureFixture
) -> None:
    running, stop = start_server(tmp_path / "home", embedder)
    try:
        # a broken schema: the request fails inside, the client gets a plain 500
        with sqlite3.connect(running.service.store.path) as other:
            other.execute("DROP TABLE api_keys")
        with running.client() as anonymous:
            key = anonymous.post("/v1/tenants", json={})
        _error(key, 500, "internal_error")
        assert "Traceback" not in key.text and str(running.home) not in key.text
    finally:
        stop()


def test_closed_tenant_creation_needs_the_admin_key(
    tmp_path: Path, embedder: LocalEmbedder
) -> None:
    running, stop = start_server(
        tmp_path / "home", embedder, ServeOptions(open_tenants=False), admin_key=ADMIN_KEY
    )
    try:
        with running.client() as anonymous:
            _error(anonymous.post("/v1/tenants", json={}), 401, "unauthorized", "admin key")
        with running.client("mk_bad") as bad:
            _error(bad.post("/v1/tenants", json={}), 401, "unauthorized")
        with running.client(ADMIN_KEY) as admin:
            made = admin.post("/v1/tenants", json={"name": "x"})
            assert made.status_code == 200
        with running.client(made.json()["api_key"]) as tenant:
            _error(tenant.post("/v1/tenants", json={}), 403, "forbidden")
            assert tenant.get("/v1/memories").status_code == 200
    finally:
        stop()


def test_open_tenant_creation_is_the_loopback_default() -> None:
    ServeOptions(host="127.0.0.1", no_auth=True).check()
    ServeOptions(host="::1", no_auth=True).check()
    with pytest.raises(ValidationError, match="loopback"):
        ServeOptions(host="0.0.0.0", no_auth=True).check()
    with pytest.raises(ValidationError, match="loopback"):
        ServeOptions(host=socket.gethostname(), no_auth=True).check()


def test_no_auth_serves_the_local_tenant(tmp_path: Path, embedder: LocalEmbedder) -> None:
    running, stop = start_server(tmp_path / "home", embedder, ServeOptions(no_auth=True))
    try:
        with running.client() as anonymous:
            made = anonymous.post("/v1/memories", json={"content": "no key needed here"})
            assert made.status_code == 201 and made.json()["tenant_id"] == "local"
        local = running.service.get(made.json()["id"])
        assert local.content == "no key needed here"
    finally:
        stop()
