"""Whatever a browser (or anyone) sends to the dashboard's pages, the answer is never a 5xx."""

from __future__ import annotations

import re
from collections.abc import Iterator
from urllib.parse import quote

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from server_harness import RunningServer, create_tenant

from memoryd.dashboard import COOKIE

TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=60) | st.sampled_from(
    ["", "-1", "0", "99999999999999999999", "%00", "../../etc", "<script>", "猫"]
)
GETS = [
    ("/", ("page_no", "memory_type", "category", "state", "tier", "tags", "space_id", "agent_id")),
    ("/search", ("q", "trace")),
    ("/conversations", ("page_no",)),
    ("/settings", ("saved",)),
]
POSTS = [
    ("/memories/new", ("content", "category", "tags", "importance")),
    ("/settings", ("enabled", "max_tokens", "retention_days", "strategy")),
    ("/spaces", ("name",)),
    ("/spaces/members", ("space_id", "user_id", "role")),
    ("/spaces/invitations", ("space_id", "answer")),
    ("/spaces/leave", ("space_id",)),
]
PATHS = ["/memories/{}", "/memories/{}/edit", "/imports/{}", "/conversations/{}"]


@pytest.fixture(scope="module")
def signed_in(server: RunningServer) -> Iterator[httpx.Client]:
    _, key = create_tenant(server, "fuzz")
    with httpx.Client(base_url=server.url, cookies={COOKIE: key}, timeout=30) as client:
        client.post("/memories/new", data={"content": "I like green tea", "csrf": token(client)})
        yield client


def token(client: httpx.Client) -> str:
    """The session's form token, as a page hands it to its forms."""
    found = re.search(r'name="csrf" value="([0-9a-f]+)"', client.get("/memories/new").text)
    assert found
    return found.group(1)


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(route=st.integers(0, len(GETS) - 1), values=st.lists(TEXT, min_size=8, max_size=8))
def test_query_strings(signed_in: httpx.Client, route: int, values: list[str]) -> None:
    path, names = GETS[route]
    response = signed_in.get(path, params=dict(zip(names, values, strict=False)))
    assert response.status_code < 500, (path, values, response.text[:300])


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(route=st.integers(0, len(POSTS) - 1), values=st.lists(TEXT, min_size=4, max_size=4))
def test_forms(signed_in: httpx.Client, route: int, values: list[str]) -> None:
    path, names = POSTS[route]
    form = dict(zip(names, values, strict=False))
    response = signed_in.post(path, data={**form, "csrf": token(signed_in)})
    assert response.status_code < 500, (path, values, response.text[:300])


def test_a_malformed_query_is_a_400_page(signed_in: httpx.Client) -> None:
    response = signed_in.get("/", params={"page_no": "two"})
    assert response.status_code == 400
    assert "text/html" in response.headers["content-type"] and "page_no" in response.text
    # the same tenant's JSON API answers the same mistake with its own 400
    key = str(signed_in.cookies[COOKIE])
    api = signed_in.get("/v1/memories", params={"limit": "two"}, headers={"X-API-Key": key})
    assert api.status_code == 400 and api.json()["error"]["code"] == "validation_error", api.text
    # a dashboard session is no API key: the JSON API asks for one
    assert signed_in.get("/v1/memories").status_code == 401


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(route=st.integers(0, len(PATHS) - 1), ident=TEXT)
def test_ids_in_paths(signed_in: httpx.Client, route: int, ident: str) -> None:
    path = PATHS[route].format(quote(ident, safe="") or "x")
    response = signed_in.get(path)
    assert response.status_code < 500, (path, response.text[:300])
