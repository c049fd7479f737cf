"""``RemoteMemory``: the embedded ``Memory`` API, served by a memoryd server over HTTP.

Switching is one line::

    mem = Memory()                                               # embedded
    mem = RemoteMemory("http://127.0.0.1:8080", api_key="mk_…")  # a server

Errors come back as the same ``MemorydError`` subclasses, with the server's
code and message. ``reindex`` is not offered: it rewrites every vector of
the server's store, so it is run on the server's host (``memoryd reindex``).
On a server each user is a tenant with keys of its own, so the client has
no ``user_id``: the key says whose memories these are.

Each method is a :class:`Call` (what to send, how to read the answer), so the
asyncio client (:mod:`memoryd.aio`) sends the very same requests.
"""

from __future__ import annotations

import builtins
import io
import os
from collections.abc import Mapping, Sequence
from datetime import datetime
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Unpack

from memoryd import errors
from memoryd.extras import extra
from memoryd.jobs.worker import wait_until_done
from memoryd.models import IngestResult, Message, ScoredMemory, SearchResponse, wire
from memoryd.models import Memory as MemoryRecord
from memoryd.options import (
    AddFields,
    ImportOptions,
    IngestOptions,
    ListFilters,
    SearchOptions,
    check_options,
)
from memoryd.portability import Progress
from memoryd.remote_call import Call, R
from memoryd.text.conversation import check_message

if TYPE_CHECKING:
    import httpx

    from memoryd.client_tasks import RemoteTasks

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


def _query(options: Mapping[str, Any]) -> dict[str, Any]:
    """Options as query parameters: lists comma-joined, times in RFC 3339, None left out."""
    out: dict[str, Any] = {}
    for name, value in _no_user(options).items():
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


def _jsonable(fields: Mapping[str, Any]) -> dict[str, Any]:
    """Fields as JSON values (enums by value, times in RFC 3339), None left out."""
    return {name: wire(value) for name, value in _no_user(fields).items() if value is not None}


def _no_user(options: Mapping[str, Any]) -> dict[str, Any]:
    """The options but ``user_id`` (None: left out; a value: refused)."""
    if options.get("user_id") is not None:
        raise errors.ValidationError(
            "user_id is for the embedded Memory; on a server each user is a tenant: "
            "use that tenant's API key"
        )
    return {k: v for k, v in options.items() if k != "user_id"}


def _json(data: Any) -> Any:
    return data


def _memory(data: Any) -> MemoryRecord:
    return MemoryRecord.model_validate(data)


def _nothing(data: Any) -> None:
    return None


def _messages(messages: Any, dates: Any) -> list[dict[str, Any]]:
    """Messages checked as the embedded store checks them, in the wire form."""
    if isinstance(messages, str | bytes) or not isinstance(messages, Sequence):
        raise errors.ValidationError(
            "messages must be a list of {'role': ..., 'content': ...} messages, "
            f"got {type(messages).__name__}"
        )
    checked = [check_message(i, m) for i, m in enumerate(messages)]
    out = [m.model_dump(exclude_none=True) for m in checked]
    when = dates if isinstance(dates, list | tuple) else [dates] * len(out)
    for message, at in zip(out, when, strict=False):
        if at is not None and "created_at" not in message:
            message["created_at"] = at
    return out


class Calls:
    """The requests behind each method of the remote clients (sync and asyncio)."""

    @staticmethod
    def add(content: str, fields: Mapping[str, Any]) -> Call[MemoryRecord]:
        check_options("add", fields, AddFields.__optional_keys__ | {"user_id"})
        return Call(
            "POST", "/v1/memories", _memory, {"json": {"content": content, **_jsonable(fields)}}
        )

    @staticmethod
    def update(memory_id: str, fields: dict[str, Any]) -> Call[MemoryRecord]:
        return Call("PUT", f"/v1/memories/{memory_id}", _memory, {"json": _jsonable(fields)})

    @staticmethod
    def delete(memory_id: str) -> Call[None]:
        return Call("DELETE", f"/v1/memories/{memory_id}", _nothing)

    @staticmethod
    def batch_delete(
        ids: Sequence[str] | None, confirm: bool, filter_fields: dict[str, Any]
    ) -> Call[dict[str, Any]]:
        body: dict[str, Any] = {"confirm": confirm}
        if ids:
            body["memory_ids"] = list(ids)
        if filter_fields:
            if "created_before" in filter_fields:
                filter_fields["before"] = filter_fields.pop("created_before")
            body["filter"] = _jsonable(filter_fields)
        return Call("POST", "/v1/memories/batch-delete", _json, {"json": body})

    @staticmethod
    def delete_all(confirm: bool) -> Call[dict[str, int]]:
        if not confirm:
            raise errors.ValidationError("delete-all needs explicit confirmation")
        headers = {"X-Confirm": "delete-all"}
        return Call("DELETE", "/v1/memories/all", _json, {"headers": headers})

    @staticmethod
    def ingest(
        messages: Any, mode: str, dates: Any, options: Mapping[str, Any]
    ) -> Call[IngestResult]:
        check_options("ingest", options, IngestOptions.__optional_keys__ | {"user_id"})
        body = _jsonable({"messages": _messages(messages, dates), "mode": mode, **options})
        return Call("POST", "/v1/memories", IngestResult.model_validate, {"json": body})

    @staticmethod
    def mark_noise(memory_id: str) -> Call[None]:
        return Call("POST", f"/v1/memories/{memory_id}/noise", _nothing)

    @staticmethod
    def task(task_id: str) -> Call[dict[str, Any]]:
        return Call("GET", f"/v1/tasks/{task_id}", _json)

    @staticmethod
    def consolidate() -> Call[dict[str, Any]]:
        return Call("POST", "/v1/consolidate", _json)

    @staticmethod
    def import_task(import_id: str) -> Call[dict[str, Any]]:
        return Call("GET", f"/v1/imports/{import_id}", _json)

    @staticmethod
    def rollback_import(import_id: str) -> Call[dict[str, Any]]:
        return Call("POST", f"/v1/imports/{import_id}/rollback", _json)

    @staticmethod
    def import_file(path: Path | str, options: Mapping[str, Any]) -> Call[dict[str, Any]]:
        check_options("import_file", options, ImportOptions.__optional_keys__)
        file = Path(path).expanduser()
        try:
            data = file.read_bytes()
        except OSError as exc:
            raise errors.ValidationError(f"cannot read {file}: {exc.strerror}") from None
        fields = {k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in options.items()}
        files = {"file": (file.name, data)}
        return Call("POST", "/v1/imports", _json, {"files": files, "data": fields})

    @staticmethod
    def get(memory_id: str) -> Call[MemoryRecord]:
        return Call("GET", f"/v1/memories/{memory_id}", _memory)

    @staticmethod
    def list(filters: Mapping[str, Any]) -> Call[builtins.list[MemoryRecord]]:
        check_options("list", filters, ListFilters.__optional_keys__ | {"user_id"})
        return Call(
            "GET",
            "/v1/memories",
            lambda data: [MemoryRecord.model_validate(m) for m in data["memories"]],
            {"params": _query(filters)},
        )

    @staticmethod
    def search(query: str, given: Mapping[str, Any]) -> Call[SearchResponse]:
        check_options("search", given, SearchOptions.__optional_keys__ | {"user_id"})
        options = dict(given)
        if "spaces" in options:
            options["space"] = options.pop("spaces")
        if "tags" in options:  # the server's tag filter (``tags`` itself is ignored there)
            options["filter_tags"] = options.pop("tags")
        params = _query({"q": query, **options})
        return Call("GET", "/v1/memories/search", SearchResponse.model_validate, {"params": params})

    @staticmethod
    def history(memory_id: str) -> Call[builtins.list[dict[str, Any]]]:
        return Call("GET", f"/v1/memories/{memory_id}/history", lambda data: data["history"])

    @staticmethod
    def stats() -> Call[dict[str, Any]]:
        return Call("GET", "/v1/stats", _json)

    @staticmethod
    def profile(query: str | None) -> Call[dict[str, Any]]:
        def parse(data: Any) -> dict[str, Any]:
            if not isinstance(data, dict):
                raise ServerError("GET /v1/profile did not answer a JSON object")
            return data

        return Call("GET", "/v1/profile", parse, {"params": {"q": query} if query else {}})

    @staticmethod
    def export() -> Call[str]:
        return Call("GET", "/v1/export", str)

    @staticmethod
    def import_(path: Path | str) -> Call[dict[str, int]]:
        headers = {"Content-Type": "application/x-ndjson"}
        content = Path(path).read_bytes()
        return Call("POST", "/v1/import", _json, {"content": content, "headers": headers})


def settings(
    url: str | None, api_key: str | None, agent_id: str | None, session_id: str | None = None
) -> tuple[str, dict[str, str]]:
    """The base URL and headers: arguments, else ``MEMORYD_URL`` / ``MEMORYD_API_KEY``.

    ``agent_id`` and ``session_id`` go as ``X-Agent-Id`` and ``X-Session-Id``: the
    server then answers as that agent, in that session (its scopes only)."""
    base = (url or os.environ.get("MEMORYD_URL") or DEFAULT_URL).rstrip("/")
    headers = {"Accept": "application/json"}
    key = api_key or os.environ.get("MEMORYD_API_KEY") or os.environ.get("OMEM_API_KEY")
    if key:
        headers["X-API-Key"] = key
    if agent_id:
        headers["X-Agent-Id"] = agent_id
        if session_id:
            headers["X-Session-Id"] = session_id
    return base, headers


def answer(call: Call[R], response: httpx.Response) -> R:
    """The method's result from the server's answer; its error as a MemorydError."""
    if response.is_error:
        raise _error(response)
    json = response.headers.get("content-type", "").startswith("application/json")
    data = response.json() if json else response.text
    return call.parse((data, response.status_code) if call.with_status else data)


def write_export(path: Path | str, text: str, progress: Progress | None) -> int:
    Path(path).write_text(text, encoding="utf-8")
    count = sum(1 for line in io.StringIO(text) if '"type": "memory"' in line)
    if progress:
        progress(count)
    return count


class RemoteMemory:
    """A memoryd server as a memory store; the same methods as ``memoryd.Memory``."""

    def __init__(
        self,
        url: str | None = None,
        api_key: str | None = None,
        *,
        agent_id: str | None = None,
        session_id: str | None = None,
        timeout: float = DEFAULT_TIMEOUT_S,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        with extra("remote", "RemoteMemory"):
            import httpx
        base, headers = settings(url, api_key, agent_id, session_id)
        self.agent_id = agent_id
        self._http = httpx.Client(
            base_url=base, headers=headers, timeout=timeout, transport=transport
        )

    def _send(self, call: Call[R]) -> R:
        import httpx  # loaded by the constructor

        try:
            response = self._http.request(call.method, call.path, **call.options)
        except httpx.HTTPError as exc:
            raise ServerError(f"cannot reach {self._http.base_url}: {exc}") from exc
        return answer(call, response)

    def request(self, method: str, path: str, **options: Any) -> Any:
        """Any route of the server: its JSON (or text) answer; its error as a MemorydError."""
        return self._send(Call(method, path, _json, options))

    # writes
    def add(self, content: str, **fields: Unpack[AddFields]) -> MemoryRecord:
        return self._send(Calls.add(content, fields))

    def update(self, memory_id: str, **fields: Any) -> MemoryRecord:
        return self._send(Calls.update(memory_id, fields))

    def delete(self, memory_id: str) -> None:
        self._send(Calls.delete(memory_id))

    def batch_delete(
        self, ids: Sequence[str] | None = None, confirm: bool = False, **filter_fields: Any
    ) -> dict[str, Any]:
        return self._send(Calls.batch_delete(ids, confirm, filter_fields))

    def delete_all(self, confirm: bool = False) -> dict[str, int]:
        return self._send(Calls.delete_all(confirm))

    def ingest(
        self,
        messages: Sequence[Message | dict[str, Any]],
        *,
        mode: str = "raw",
        dates: datetime | Sequence[datetime | None] | None = None,
        **options: Unpack[IngestOptions],
    ) -> IngestResult:
        return self._send(Calls.ingest(messages, mode, dates, options))

    def mark_noise(self, memory_id: str) -> None:
        """Delete a memory that is chatter and teach the noise filter to drop its like."""
        self._send(Calls.mark_noise(memory_id))

    @cached_property
    def tasks(self) -> RemoteTasks:
        """Collaboration tasks of the tenant's agents: ``create``, ``list``, ``get``,
        ``join``, ``leave``, ``delete`` (as ``Memory.tasks``)."""
        from memoryd.client_tasks import RemoteTasks

        return RemoteTasks(self._send, self.agent_id)

    def task(self, task_id: str) -> dict[str, Any]:
        """The status of an ingest task (smart ones run in the background)."""
        return self._send(Calls.task(task_id))

    def wait_for_task(self, task_id: str, timeout_s: float = 60.0) -> dict[str, Any]:
        return wait_until_done(self.task, task_id, timeout_s, TASK_POLL_S)

    def consolidate(self, *, wait: bool = True, timeout_s: float = 300.0) -> dict[str, Any]:
        """Merge duplicates and retire superseded facts on the server, with history."""
        task = self._send(Calls.consolidate())
        return self.wait_for_task(task["id"], timeout_s) if wait else task

    # file import
    def import_file(self, path: Path | str, **options: Unpack[ImportOptions]) -> dict[str, Any]:
        """Upload a file to ``POST /v1/imports``; its ImportTask (see ``Memory.import_file``)."""
        return self._send(Calls.import_file(path, options))

    def import_task(self, import_id: str) -> dict[str, Any]:
        return self._send(Calls.import_task(import_id))

    def wait_for_import(self, import_id: str, timeout_s: float = 300.0) -> dict[str, Any]:
        return wait_until_done(self.import_task, import_id, timeout_s, TASK_POLL_S)

    def rollback_import(self, import_id: str) -> dict[str, Any]:
        return self._send(Calls.rollback_import(import_id))

    # reads
    def get(self, memory_id: str) -> MemoryRecord:
        return self._send(Calls.get(memory_id))

    def list(self, **filters: Unpack[ListFilters]) -> builtins.list[MemoryRecord]:
        return self._send(Calls.list(filters))

    def search(self, query: str, **options: Unpack[SearchOptions]) -> builtins.list[ScoredMemory]:
        return self._send(Calls.search(query, options)).results

    def explain(self, query: str, **options: Unpack[SearchOptions]) -> SearchResponse:
        """Search with the per-stage trace."""
        return self._send(Calls.search(query, {**options, "include_trace": True}))

    def history(self, memory_id: str) -> builtins.list[dict[str, Any]]:
        return self._send(Calls.history(memory_id))

    def stats(self) -> dict[str, Any]:
        return self._send(Calls.stats())

    def profile(self, query: str | None = None) -> dict[str, Any]:
        return self._send(Calls.profile(query))

    # portability
    def export(self, path: Path | str, progress: Progress | None = None) -> int:
        return write_export(path, self._send(Calls.export()), progress)

    def import_(self, path: Path | str, progress: Progress | None = None) -> dict[str, int]:
        result = self._send(Calls.import_(path))
        if progress:
            progress(result.get("imported", 0))
        return result

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> RemoteMemory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
