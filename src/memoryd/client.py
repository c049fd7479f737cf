"""``RemoteMemory``: the embedded ``Memory`` API, served by a memoryd server over HTTP.

Switching is one line::

    mem = Memory("~/.memoryd")                                   # embedded
    mem = RemoteMemory("http://127.0.0.1:8080", api_key="mk_…")  # a server

Errors come back as the same ``MemorydError`` subclasses, with the server's
code and message. ``reindex`` is not offered: it rewrites every vector of
the server's store, so it is run on the server's host (``memoryd reindex``).
"""

from __future__ import annotations

import builtins
import io
import os
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx

from memoryd import errors
from memoryd.ingest.worker import wait_until_done
from memoryd.models import IngestResult, Message, ScoredMemory, SearchResponse, wire
from memoryd.models import Memory as MemoryRecord
from memoryd.portability import Progress

DEFAULT_URL = "http://127.0.0.1:8080"
DEFAULT_TIMEOUT_S = 30.0
TASK_POLL_S = 0.1
ERRORS: dict[str, type[errors.MemorydError]] = {
    "validation_error": errors.ValidationError,
    "not_found": errors.NotFoundError,
    "unauthorized": errors.UnauthorizedError,
    "forbidden": errors.ForbiddenError,
    "payload_too_large": errors.PayloadTooLargeError,
    "embedding_mismatch": errors.EmbeddingMismatchError,
    "storage_damaged": errors.StorageDamagedError,
}


class ServerError(errors.MemorydError):
    """The server could not be reached, or answered something that is not memoryd's."""

    code = "server_error"
    prefix = "server error"
    http_status = 502


def _error(response: httpx.Response) -> errors.MemorydError:
    try:
        body = response.json()["error"]
        code, message = str(body["code"]), str(body["message"])
    except (ValueError, KeyError, TypeError):
        return ServerError(f"HTTP {response.status_code}: {response.text[:200]}")
    kind = ERRORS.get(code, errors.MemorydError)
    prefix = kind.prefix + ": "
    exc = kind(message[len(prefix) :] if message.startswith(prefix) else message)
    exc.code = code
    return exc


def _query(options: dict[str, Any]) -> dict[str, Any]:
    """Options as query parameters: lists comma-joined, times in RFC 3339, None left out."""
    out: dict[str, Any] = {}
    for name, value in options.items():
        if value is None:
            continue
        if isinstance(value, list | tuple):
            value = ",".join(str(v) for v in value)
        elif isinstance(value, datetime):
            value = value.isoformat()
        elif isinstance(value, bool):
            value = "true" if value else "false"
        out[name] = value
    return out


class RemoteMemory:
    """A memoryd server as a memory store; the same methods as ``memoryd.Memory``."""

    def __init__(
        self,
        url: str | None = None,
        api_key: str | None = None,
        *,
        agent_id: str | None = None,
        timeout: float = DEFAULT_TIMEOUT_S,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        base = (url or os.environ.get("MEMORYD_URL") or DEFAULT_URL).rstrip("/")
        headers = {"Accept": "application/json"}
        key = api_key or os.environ.get("MEMORYD_API_KEY") or os.environ.get("OMEM_API_KEY")
        if key:
            headers["X-API-Key"] = key
        if agent_id:
            headers["X-Agent-Id"] = agent_id
        self._http = httpx.Client(
            base_url=base, headers=headers, timeout=timeout, transport=transport
        )

    def _call(self, method: str, path: str, **kwargs: Any) -> Any:
        try:
            response = self._http.request(method, path, **kwargs)
        except httpx.HTTPError as exc:
            raise ServerError(f"cannot reach {self._http.base_url}: {exc}") from exc
        if response.is_error:
            raise _error(response)
        if response.headers.get("content-type", "").startswith("application/json"):
            return response.json()
        return response.text

    # writes
    def add(self, content: str, **fields: Any) -> MemoryRecord:
        body = {"content": content, **_jsonable(fields)}
        return MemoryRecord.model_validate(self._call("POST", "/v1/memories", json=body))

    def update(self, memory_id: str, **fields: Any) -> MemoryRecord:
        data = self._call("PUT", f"/v1/memories/{memory_id}", json=_jsonable(fields))
        return MemoryRecord.model_validate(data)

    def delete(self, memory_id: str) -> None:
        self._call("DELETE", f"/v1/memories/{memory_id}")

    def batch_delete(
        self, ids: Sequence[str] | None = None, confirm: bool = False, **filter_fields: Any
    ) -> dict[str, Any]:
        body: dict[str, Any] = {"confirm": confirm}
        if ids:
            body["memory_ids"] = list(ids)
        if filter_fields:
            if "created_before" in filter_fields:
                filter_fields["before"] = filter_fields.pop("created_before")
            body["filter"] = _jsonable(filter_fields)
        result: dict[str, Any] = self._call("POST", "/v1/memories/batch-delete", json=body)
        return result

    def delete_all(self, confirm: bool = False) -> dict[str, int]:
        if not confirm:
            raise errors.ValidationError("delete-all needs explicit confirmation")
        result: dict[str, int] = self._call(
            "DELETE", "/v1/memories/all", headers={"X-Confirm": "delete-all"}
        )
        return result

    def ingest(
        self,
        messages: Sequence[Message | dict[str, Any]],
        *,
        mode: str = "raw",
        dates: datetime | Sequence[datetime | None] | None = None,
        **options: Any,
    ) -> IngestResult:
        wire = [
            m.model_dump(exclude_none=True) if isinstance(m, Message) else dict(m) for m in messages
        ]
        when = dates if isinstance(dates, list | tuple) else [dates] * len(wire)
        for message, at in zip(wire, when, strict=False):
            if at is not None and "created_at" not in message:
                message["created_at"] = at
        body = _jsonable({"messages": wire, "mode": mode, **options})
        return IngestResult.model_validate(self._call("POST", "/v1/memories", json=body))

    def mark_noise(self, memory_id: str) -> None:
        """Delete a memory that is chatter and teach the noise filter to drop its like."""
        self._call("POST", f"/v1/memories/{memory_id}/noise")

    def task(self, task_id: str) -> dict[str, Any]:
        """The status of an ingest task (smart ones run in the background)."""
        result: dict[str, Any] = self._call("GET", f"/v1/tasks/{task_id}")
        return result

    def wait_for_task(self, task_id: str, timeout_s: float = 60.0) -> dict[str, Any]:
        return wait_until_done(self.task, task_id, timeout_s, TASK_POLL_S)

    # file import
    def import_file(self, path: Path | str, **options: Any) -> dict[str, Any]:
        """Upload a file to ``POST /v1/imports``; its ImportTask (see ``Memory.import_file``)."""
        file = Path(path).expanduser()
        fields = {k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in options.items()}
        with file.open("rb") as handle:
            result: dict[str, Any] = self._call(
                "POST", "/v1/imports", files={"file": (file.name, handle)}, data=fields
            )
        return result

    def import_task(self, import_id: str) -> dict[str, Any]:
        result: dict[str, Any] = self._call("GET", f"/v1/imports/{import_id}")
        return result

    def wait_for_import(self, import_id: str, timeout_s: float = 300.0) -> dict[str, Any]:
        return wait_until_done(self.import_task, import_id, timeout_s, TASK_POLL_S)

    def rollback_import(self, import_id: str) -> dict[str, Any]:
        result: dict[str, Any] = self._call("POST", f"/v1/imports/{import_id}/rollback")
        return result

    # reads
    def get(self, memory_id: str) -> MemoryRecord:
        return MemoryRecord.model_validate(self._call("GET", f"/v1/memories/{memory_id}"))

    def list(self, **filters: Any) -> builtins.list[MemoryRecord]:
        data = self._call("GET", "/v1/memories", params=_query(filters))
        return [MemoryRecord.model_validate(m) for m in data["memories"]]

    def search(self, query: str, **options: Any) -> builtins.list[ScoredMemory]:
        return self._search(query, options).results

    def explain(self, query: str, **options: Any) -> SearchResponse:
        """Search with the per-stage trace."""
        return self._search(query, {**options, "include_trace": True})

    def _search(self, query: str, options: dict[str, Any]) -> SearchResponse:
        if "spaces" in options:
            options["space"] = options.pop("spaces")
        data = self._call("GET", "/v1/memories/search", params=_query({"q": query, **options}))
        return SearchResponse.model_validate(data)

    def history(self, memory_id: str) -> builtins.list[dict[str, Any]]:
        rows: builtins.list[dict[str, Any]] = self._call(
            "GET", f"/v1/memories/{memory_id}/history"
        )["history"]
        return rows

    def stats(self) -> dict[str, Any]:
        result: dict[str, Any] = self._call("GET", "/v1/stats")
        return result

    def profile(self, query: str | None = None) -> dict[str, Any]:
        params = {"q": query} if query else {}
        result = self._call("GET", "/v1/profile", params=params)
        if not isinstance(result, dict):
            raise ServerError("GET /v1/profile did not answer a JSON object")
        return result

    # portability
    def export(self, path: Path | str, progress: Progress | None = None) -> int:
        text: str = self._call("GET", "/v1/export")
        Path(path).write_text(text, encoding="utf-8")
        count = sum(1 for line in io.StringIO(text) if '"type": "memory"' in line)
        if progress:
            progress(count)
        return count

    def import_(self, path: Path | str, progress: Progress | None = None) -> dict[str, int]:
        content = Path(path).read_bytes()
        result: dict[str, int] = self._call(
            "POST",
            "/v1/import",
            content=content,
            headers={"Content-Type": "application/x-ndjson"},
        )
        if progress:
            progress(result.get("imported", 0))
        return result

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> RemoteMemory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _jsonable(fields: dict[str, Any]) -> dict[str, Any]:
    """Fields as JSON values (enums by value, times in RFC 3339), None left out."""
    return {name: wire(value) for name, value in fields.items() if value is not None}
