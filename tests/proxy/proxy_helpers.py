"""Helpers of the proxy tests (a module of its own: every test folder has a conftest)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from server_harness import TenantClient

UPSTREAM_KEY = "upstream-secret"
WAIT_S = 30.0


def wait_for(check: Callable[[], Any], what: str, timeout_s: float = WAIT_S) -> Any:
    """Poll until ``check`` returns something truthy (remembering runs after the answer)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if result := check():
            return result
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def contents(t: TenantClient, **params: Any) -> list[str]:
    """The content of every memory of the tenant (conversation turns with memory_type)."""
    response = t.http.get("/v1/memories", params={"limit": 1000, **params})
    assert response.status_code == 200, response.text
    return [m["content"] for m in response.json()["memories"]]
