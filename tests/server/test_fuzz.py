"""The REST API fuzzed: no request, however malformed, makes the server answer 5xx.

``test_no_operation_answers_5xx`` lets schemathesis generate requests for
every operation of the server's own ``/openapi.json`` (schema examples,
coverage probes, random valid and invalid data) and sends them to a real
server on a loopback port as a tenant of its own. The other two tests throw
what a schema-driven generator never sends: arbitrary JSON bodies at the
write routes, and edge values (lone surrogates, naive and extreme
date-times, integers past 64 bits, NaN) in bodies and query strings.

Every answer must be below 500 and every 4xx must carry the wire contract's
``{"error": {"code", "message"}}`` body. The runs are bounded and
derandomized, so CI sees the same requests on every run.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis import Case, Response
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import response_schema_conformance
from schemathesis.specs.openapi.schemas import OpenApiSchema

if TYPE_CHECKING:
    from server_harness import RunningServer

EXPORT_PATH = "/v1/export"
# the memory proxy's routes answer errors in the format of the API they speak (docs/proxy.md)
OPENAI_ERROR_PATHS = ("/v1/chat/completions", "/v1/models")
ANTHROPIC_ERROR_PATHS = ("/v1/messages",)
NDJSON = "application/x-ndjson"
# POST /v1/import takes JSON Lines: the generated strings go on the wire as UTF-8 text
schemathesis.serializer.alias(NDJSON, "text/plain")

FUZZ_SETTINGS = settings(
    max_examples=20,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.filter_too_much,
        HealthCheck.data_too_large,
    ],
)


def new_tenant_key(server: RunningServer) -> str:
    with server.client() as anonymous:
        response = anonymous.post("/v1/tenants", json={})
    assert response.status_code == 200, response.text
    key = response.json()["api_key"]
    assert isinstance(key, str)
    return key


def body_problem(response: httpx.Response | Response, path: str) -> str | None:
    """What is wrong with an answer's body, or ``None``: errors carry the error object."""
    status = response.status_code
    content_type = response.headers.get("content-type", "")
    if isinstance(content_type, list):  # schemathesis keeps every value of a header
        content_type = content_type[0] if content_type else ""
    if status < 400 and path == EXPORT_PATH:
        return None if content_type.startswith(NDJSON) else f"export is {content_type!r}"
    if status < 400 and not response.content:
        return None
    try:
        body: Any = json.loads(response.content)
    except ValueError:
        return f"{status} with a body that is not JSON: {response.content[:200]!r}"
    if status < 400:
        return None
    error = body.get("error") if isinstance(body, dict) else None
    if path in OPENAI_ERROR_PATHS + ANTHROPIC_ERROR_PATHS:
        anthropic = path in ANTHROPIC_ERROR_PATHS
        if (
            not isinstance(error, dict)
            or not isinstance(error.get("message"), str)
            or not isinstance(error.get("type"), str)
            or (anthropic and body.get("type") != "error")
        ):
            return f"{status} without the {'Anthropic' if anthropic else 'OpenAI'} error: {body!r}"
        return None
    if (
        not isinstance(error, dict)
        or set(error) != {"code", "message"}
        or not isinstance(error["code"], str)
        or not isinstance(error["message"], str)
    ):
        return f"{status} without the error object: {body!r}"
    return None


# ------------------------------------------------------------------ schemathesis
@pytest.fixture(scope="module")
def api_key(server: RunningServer) -> str:
    """The tenant every generated request acts as."""
    return new_tenant_key(server)


@pytest.fixture(scope="module")
def api_schema(server: RunningServer, api_key: str) -> OpenApiSchema:
    schema = schemathesis.openapi.from_url(server.url + "/openapi.json")
    schema.config.update(base_url=server.url, headers={"X-API-Key": api_key})
    return schema


schema = schemathesis.pytest.from_fixture("api_schema")


@pytest.fixture(autouse=True)
def _node_id_for_schemathesis(request: pytest.FixtureRequest) -> None:
    """schemathesis 4.32 reads ``node._nodeid``, which pytest 9.2 no longer has (it keeps ``_id``).

    It only names the per-operation subtests; without it the lazy schema's test
    fails with an AttributeError before sending a single request.
    """
    node = request.node
    if not hasattr(node, "_nodeid"):
        node._nodeid = node.nodeid


@FUZZ_SETTINGS
@schema.parametrize()
def test_no_operation_answers_5xx(case: Case[Any], api_key: str) -> None:
    """No 5xx, and every answer matches the schema ``/openapi.json`` declares for its
    status: the routes' response models and the error body describe what is sent."""
    headers = {"X-API-Key": api_key}
    response = case.call(headers=headers)
    path = case.operation.path
    checks = [not_a_server_error, response_schema_conformance]
    case.validate_response(response, checks=checks, headers=headers)
    problem = body_problem(response, path)
    assert problem is None, f"{case.operation.label}: {problem}\n{case.as_curl_command(headers)}"


# ------------------------------------------------------------------ edge values
# strings: any code point, lone surrogates included (JSON can carry them as \udXXX escapes)
TEXT = st.text(st.characters(exclude_categories=()), max_size=16) | st.text(
    st.sampled_from("a \x00\ud800\udfff\u200b\U0001f600"), min_size=1, max_size=4
)
QUERY_TEXT = st.text(max_size=16)  # what a URL can carry
# values the routes parse (roles, tiers, states, ...), so that bodies get past the first check
WORDS = st.sampled_from(
    (
        *("user", "assistant", "team", "organization", "admin", "member", "reader"),
        *("core", "working", "peripheral", "profile", "preferences", "events", "global"),
        *("active", "archived", "deleted", "pinned", "insight", "session", "raw", "smart"),
    )
)
INTS = st.integers() | st.sampled_from((0, -1, 2**31, 2**63 - 1, 2**63, -(2**63) - 1, 10**30))
FLOATS = st.floats() | st.floats(0, 1)  # NaN and ±Infinity are what Python's JSON reader accepts
MOMENTS = st.datetimes() | st.sampled_from((datetime.min, datetime.max))
OFFSETS = st.sampled_from(("", "Z", "+00:00", "+05:30", "-08:00", "+14:00", "-14:00"))
DATETIMES = st.builds(lambda moment, offset: moment.isoformat() + offset, MOMENTS, OFFSETS)
JSON_SCALARS = st.none() | st.booleans() | INTS | FLOATS | TEXT | WORDS | DATETIMES
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT | WORDS, inner, max_size=4),
    max_leaves=12,
)


Fields = dict[str, st.SearchStrategy[Any]]


def lists_of(element: st.SearchStrategy[Any]) -> st.SearchStrategy[list[Any]]:
    return st.lists(element, max_size=3)


def objects(required: Fields, optional: Fields, most: int = 3) -> st.SearchStrategy[dict[str, Any]]:
    """The required keys and up to ``most`` optional ones: few enough that one bad value
    does not always stop the request at the first check."""
    if not optional:
        return st.fixed_dictionaries(required)
    chosen = st.lists(st.sampled_from(sorted(optional)), max_size=most, unique=True)
    return chosen.flatmap(
        lambda keys: st.fixed_dictionaries({**required, **{k: optional[k] for k in keys}})
    )


MESSAGE = objects({"role": WORDS | TEXT, "content": TEXT}, {"created_at": DATETIMES})
MEMBER = objects({"user_id": TEXT, "role": WORDS | TEXT}, {})
DELETE_FILTER = objects(
    {},
    {
        "source": TEXT,
        "tags": lists_of(TEXT),
        "category": WORDS | TEXT,
        "memory_type": WORDS | TEXT,
        "state": WORDS | TEXT,
        "before": DATETIMES,
    },
)
MEMORY_FIELDS: Fields = {
    "tags": lists_of(TEXT),
    "source": TEXT,
    "category": WORDS | TEXT,
    "importance": FLOATS,
    "confidence": FLOATS,
    "tier": WORDS | TEXT,
    "scope": WORDS | TEXT,
    "valid_from": DATETIMES,
    "valid_to": DATETIMES,
    "expires_at": DATETIMES,
}


def write_fields(memory_id: str, space_id: str) -> dict[str, tuple[Fields, Fields]]:
    """Each write route's (required, optional) fields, with plausible values from the above."""
    return {
        "POST /v1/memories": (
            {"content": TEXT},
            {
                **MEMORY_FIELDS,
                "messages": lists_of(MESSAGE),
                "mode": WORDS | TEXT,
                "agent_id": TEXT,
                "session_id": TEXT,
                "key": TEXT,
            },
        ),
        "PUT /v1/memories/{id}": ({}, {**MEMORY_FIELDS, "content": TEXT, "state": WORDS}),
        "POST /v1/spaces": (
            {"name": TEXT, "space_type": WORDS | TEXT},
            {"members": lists_of(MEMBER)},
        ),
        "POST /v1/memories/batch-delete": (
            {},
            {
                "memory_ids": lists_of(st.just(memory_id) | TEXT),
                "filter": DELETE_FILTER,
                "confirm": st.booleans(),
            },
        ),
        "POST /v1/memories/{id}/share": (
            {"target_space": st.just(space_id) | TEXT},
            {"note": TEXT},
        ),
    }


WRITE_ROUTES = sorted(write_fields("", ""))


def write_body(route: str, memory_id: str, space_id: str) -> st.SearchStrategy[Any]:
    """A plausible body, any JSON value, or the route's keys with any JSON values."""
    required, optional = write_fields(memory_id, space_id)[route]
    keys = st.sampled_from(sorted({**required, **optional}))
    return (
        objects(required, optional)
        | JSON_VALUES
        | st.dictionaries(keys | TEXT, JSON_VALUES, max_size=5)
    )


@pytest.fixture(scope="module")
def writer(server: RunningServer) -> Callable[[], httpx.Client]:
    """Clients of a second tenant, one per request: a 5xx closes the server's connection."""
    key = new_tenant_key(server)
    return lambda: server.client(key)


@pytest.fixture(scope="module")
def team_space(writer: Callable[[], httpx.Client]) -> str:
    with writer() as http:
        response = http.post("/v1/spaces", json={"name": "fuzz", "space_type": "team"})
    assert response.status_code == 201, response.text
    space_id = response.json()["id"]
    assert isinstance(space_id, str)
    return space_id


@pytest.mark.parametrize("route", WRITE_ROUTES)
@settings(FUZZ_SETTINGS, max_examples=40)
@given(data=st.data())
def test_arbitrary_json_bodies_never_answer_5xx(
    writer: Callable[[], httpx.Client], team_space: str, route: str, data: st.DataObject
) -> None:
    method, template = route.split(" ")
    with writer() as http:
        memory_id = ""
        if "{id}" in template:
            made = http.post("/v1/memories", json={"content": "the memory the fuzz writes to"})
            assert made.status_code == 201, made.text
            memory_id = made.json()["id"]
        body = data.draw(write_body(route, memory_id, team_space), label="body")
        raw = json.dumps(body)  # ASCII, so lone surrogates travel as \udXXX escapes
        path = template.format(id=memory_id)
        response = http.request(
            method, path, content=raw, headers={"Content-Type": "application/json"}
        )
    request = f"{method} {path} {raw}"
    assert response.status_code < 500, f"{request} -> {response.status_code} {response.text}"
    problem = body_problem(response, path)
    assert problem is None, f"{request}: {problem}"


# ------------------------------------------------------------------ query strings
QUERIES: dict[str, tuple[Fields, Fields]] = {
    "/v1/memories": (
        {},
        {
            "limit": INTS,
            "offset": INTS,
            "sort": WORDS | QUERY_TEXT,
            "order": QUERY_TEXT,
            "tags": QUERY_TEXT,
            "state": WORDS,
            "category": WORDS,
        },
    ),
    "/v1/memories/search": (
        {"q": QUERY_TEXT},
        {
            "limit": INTS,
            "min_score": FLOATS,
            "as_of": DATETIMES,
            "include_trace": st.booleans(),
            "check_stale": st.booleans(),
            "tags": QUERY_TEXT,
        },
    ),
    "/v1/stats": ({}, {"days": INTS}),
    "/v1/stats/tags": ({}, {"limit": INTS, "min_count": INTS}),
    "/v1/stats/relations": ({}, {"limit": INTS, "min_importance": FLOATS}),
    "/v1/stats/sharing": ({}, {"days": INTS}),
    "/v1/profile": ({}, {"q": QUERY_TEXT}),
}


def query_value(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


@pytest.mark.parametrize("path", sorted(QUERIES))
@settings(FUZZ_SETTINGS, max_examples=60)
@given(data=st.data())
def test_edge_query_values_never_answer_5xx(
    writer: Callable[[], httpx.Client], path: str, data: st.DataObject
) -> None:
    params = data.draw(objects(*QUERIES[path], most=2), label="params")
    with writer() as http:
        response = http.get(path, params={k: query_value(v) for k, v in params.items()})
    request = f"GET {response.request.url}"
    assert response.status_code < 500, f"{request} -> {response.status_code} {response.text}"
    problem = body_problem(response, path)
    assert problem is None, f"{request}: {problem}"
