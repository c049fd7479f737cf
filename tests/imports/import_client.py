"""Talking to the import routes of a test server: upload, wait, look."""

from __future__ import annotations

import time
from typing import Any

import httpx
from server_harness import TenantClient

IMPORT_TIMEOUT_S = 300  # a hang guard: imports here take seconds


def upload(
    t: TenantClient, name: str, data: bytes, path: str = "/v1/imports", **fields: str
) -> httpx.Response:
    return t.http.post(path, files={"file": (name, data)}, data=fields)


def wait_import(t: TenantClient, import_id: str) -> dict[str, Any]:
    """The import once it left ``processing``."""
    deadline = time.monotonic() + IMPORT_TIMEOUT_S
    while True:
        task: dict[str, Any] = t.http.get(f"/v1/imports/{import_id}").json()
        if task["status"] != "processing":
            return task
        assert time.monotonic() < deadline, task
        time.sleep(0.05)


def imported(t: TenantClient, name: str, data: bytes, **fields: str) -> dict[str, Any]:
    response = upload(t, name, data, **fields)
    assert response.status_code == 200, response.text
    return wait_import(t, response.json()["id"])


def memories(t: TenantClient, memory_type: str = "insight") -> list[dict[str, Any]]:
    found = t.http.get("/v1/memories", params={"memory_type": memory_type, "limit": 1000})
    result: list[dict[str, Any]] = found.json()["memories"]
    return result


def search(t: TenantClient, q: str, **params: str) -> list[dict[str, Any]]:
    response = t.http.get("/v1/memories/search", params={"q": q, **params})
    assert response.status_code == 200, response.text
    return [r["memory"] for r in response.json()["results"]]
