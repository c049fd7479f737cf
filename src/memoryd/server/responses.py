"""What the REST API answers: the shapes of its responses, for ``/openapi.json``.

The routes build their answers from the service's records (``Memory.to_json``,
the wire form); these models describe those answers so that a client
generator and the fuzz test's response check (``tests/server/test_fuzz.py``)
know each route's body. A route declares its model with ``response_model``
(its success status) or ``responses`` (several), and every router the error
body of the wire contract (:data:`memoryd.web.errors.ERROR_RESPONSES`).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from memoryd.models import ApiKey, Memory, Space
from memoryd.web.errors import ERROR_RESPONSES as ERROR_RESPONSES
from memoryd.web.errors import ErrorDetail


class MemoryOut(Memory):
    """A memory in the wire form (every field, times with 6 digits, ``id`` first)."""

    stale_info: dict[str, Any] | None = Field(
        default=None, description="with check_stale=true, for a shared copy"
    )


class IngestAccepted(BaseModel):
    """A conversation accepted (202): stored and found by words now, distilled later."""

    task_id: str | None
    stored_count: int
    session_id: str | None
    memory_ids: list[str]
    status_url: str


class MemoryPage(BaseModel):
    memories: list[Memory]
    total_count: int
    limit: int
    offset: int


class SearchHit(BaseModel):
    memory: Memory
    score: float
    similarity: float | None
    stale_info: dict[str, Any] | None = None


class SearchResults(BaseModel):
    results: list[SearchHit]
    trace: dict[str, Any] | None = Field(default=None, description="with include_trace=true")


class Deleted(BaseModel):
    """What a batch delete did (``deleted``), or would do (``would_delete``, a dry run)."""

    deleted: int | None = None
    would_delete: int | None = None
    mode: str | None = None
    sessions_cleared: int | None = None


class History(BaseModel):
    memory_id: str
    history: list[dict[str, Any]]


class Status(BaseModel):
    status: str


class Task(BaseModel):
    """A background task of the tenant: its status and, when done, its result."""

    model_config = {"extra": "allow"}

    id: str
    kind: str
    status: str
    errors: list[Any]
    attempts: int
    created_at: str | None
    updated_at: str | None
    completed_at: str | None


class ProfileHit(BaseModel):
    score: float
    memory: dict[str, Any]


class Profile(BaseModel):
    static_facts: list[str]
    dynamic_context: list[str]
    search_results: list[ProfileHit] | None
    profile: str


# an answer whose keys are a record's own (stats, imports, checkpoints, context): a JSON
# object, described by the record's documentation (docs/server.md)
Object = dict[str, Any]


class Health(BaseModel):
    status: str = Field(description="ok, or degraded (with 503)")
    storage: str = Field(description="ok, damaged, full, read_only or failing")
    error: ErrorDetail | None = None


class TenantCreated(BaseModel):
    id: str
    api_key: str = Field(description="shown once: the store keeps only its hash")
    status: str
    name: str


class KeyList(BaseModel):
    keys: list[ApiKey]


class KeyCreated(ApiKey):
    api_key: str = Field(description="shown once: the store keeps only its hash")


class SpaceList(BaseModel):
    spaces: list[Space]


class SpaceStatus(BaseModel):
    status: str
    space_id: str


class Remembered(BaseModel):
    memories: list[Memory]
    bare: bool = Field(description="the text held no 'remember that' request of its own")


class Recalled(BaseModel):
    text: str = Field(description="the block to inject, empty when nothing is near")
    count: int


class TaskList(BaseModel):
    tasks: list[Object]


class Layers(BaseModel):
    layers: list[Object]


class Consolidated(BaseModel):
    consolidated: int
