"""RemoteMemory does what the embedded Memory does: one script, both doors, same answers."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from server_harness import RunningServer

from memoryd import (
    AsyncMemory,
    AsyncRemoteMemory,
    Memory,
    NotFoundError,
    RemoteMemory,
    ValidationError,
)
from memoryd.client import ServerError
from memoryd.embed.local import LocalEmbedder
from memoryd.errors import MemorydError, UnauthorizedError

if TYPE_CHECKING:
    from server_harness import TenantClient


def _script(mem: Memory | RemoteMemory, tmp: Path) -> dict[str, Any]:
    """Everything a caller does with a store, as plain values to compare."""
    berlin = mem.add("I moved to Berlin in 2024", category="profile", tags=["city"])
    mem.add("I prefer dark roast coffee", importance=0.7)
    # the full text behind a memory's words (a LangGraph store keeps its values there)
    note = mem.add("Packing list for the ferry", l2_content='{"items": ["tent", "stove"]}')
    ingested = mem.ingest(
        [
            {"role": "user", "content": "I just bought a new bicycle"},
            {"role": "assistant", "content": "Nice! What kind?"},
        ],
        session_id="chat-42",
    )
    out: dict[str, Any] = {
        "stored": ingested.stored_count,
        "ingested_ids": len(ingested.memory_ids),
        "top": mem.search("where does the user live", limit=5)[0].memory.content,
        "full_text": mem.get(note.id).l2_content,
        "trace": [s.name for s in (mem.explain("bicycle").trace or _no_trace()).stages],
    }
    smart = mem.ingest(
        [{"role": "user", "content": "I prefer green tea. Hi! I usually swim on Sundays."}],
        session_id="chat-43",
        mode="smart",
    )
    done = mem.wait_for_task(smart.task_id)
    out["smart"] = (done["status"], done["facts_extracted"], done["decisions"])
    swim = next(m for m in mem.list(memory_type="insight") if "swim" in m.content)
    mem.mark_noise(swim.id)
    out["after_noise"] = sorted(m.content for m in mem.list(memory_type="insight"))
    updated = mem.update(berlin.id, content="I moved to Lisbon in 2025")
    out["updated"] = (updated.content, updated.version)
    out["get"] = mem.get(berlin.id).content
    out["history"] = [h["action"] for h in mem.history(berlin.id)]
    out["list"] = sorted(m.content for m in mem.list())
    out["sessions"] = len(mem.list(memory_type="session"))
    out["stats_total"] = mem.stats()["total"]
    out["exported"] = mem.export(tmp / "export.jsonl")
    out["reimport"] = mem.import_(tmp / "export.jsonl")
    out["dry_run"] = mem.batch_delete(tags=["city"])
    with pytest.raises(ValidationError):
        mem.add("")
    with pytest.raises(NotFoundError):
        mem.get("no-such-id")
    with pytest.raises(ValidationError):
        mem.delete_all()
    mem.delete(berlin.id)
    out["deleted_state"] = mem.get(berlin.id).state.value
    out["delete_all"] = mem.delete_all(confirm=True)
    return out


def _no_trace() -> Any:
    raise AssertionError("explain returned no trace")


def test_remote_and_embedded_agree(
    server: RunningServer, alice: TenantClient, tmp_path: Path, embedder: LocalEmbedder
) -> None:
    (tmp_path / "local").mkdir()
    (tmp_path / "remote").mkdir()
    with Memory(tmp_path / "home", embedder=embedder) as local:
        embedded = _script(local, tmp_path / "local")
    with RemoteMemory(server.url, alice.key) as remote:
        served = _script(remote, tmp_path / "remote")
    assert served == embedded
    assert embedded["top"] == "I moved to Berlin in 2024"
    assert embedded["full_text"] == '{"items": ["tent", "stove"]}'
    assert embedded["reimport"]["skipped"] == embedded["exported"]


def test_remote_errors(server: RunningServer, alice: TenantClient, tmp_path: Path) -> None:
    with RemoteMemory(server.url, "mk_not-a-key") as stranger, pytest.raises(UnauthorizedError):
        stranger.list()
    with (
        RemoteMemory("http://127.0.0.1:9", alice.key, timeout=2) as nowhere,
        pytest.raises(ServerError, match="cannot reach"),
    ):
        nowhere.stats()
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"type": "memory", "memory": {"content": 5}}\n', encoding="utf-8")
    with RemoteMemory(server.url, alice.key) as mem:
        with pytest.raises(ValidationError, match="line 1"):
            mem.import_(bad)
        with pytest.raises(NotFoundError) as error:
            mem.update("missing", content="x")
        assert (
            error.value.code == "not_found" and error.value.message == "not found: memory missing"
        )


async def _async_script(mem: AsyncMemory | AsyncRemoteMemory, tmp: Path) -> dict[str, Any]:
    """``_script``, step for step, through the asyncio SDK."""
    berlin = await mem.add("I moved to Berlin in 2024", category="profile", tags=["city"])
    await mem.add("I prefer dark roast coffee", importance=0.7)
    note = await mem.add("Packing list for the ferry", l2_content='{"items": ["tent", "stove"]}')
    ingested = await mem.ingest(
        [
            {"role": "user", "content": "I just bought a new bicycle"},
            {"role": "assistant", "content": "Nice! What kind?"},
        ],
        session_id="chat-42",
    )
    out: dict[str, Any] = {
        "stored": ingested.stored_count,
        "ingested_ids": len(ingested.memory_ids),
        "top": (await mem.search("where does the user live", limit=5))[0].memory.content,
        "full_text": (await mem.get(note.id)).l2_content,
        "trace": [s.name for s in ((await mem.explain("bicycle")).trace or _no_trace()).stages],
    }
    smart = await mem.ingest(
        [{"role": "user", "content": "I prefer green tea. Hi! I usually swim on Sundays."}],
        session_id="chat-43",
        mode="smart",
    )
    done = await mem.wait_for_task(smart.task_id)
    out["smart"] = (done["status"], done["facts_extracted"], done["decisions"])
    swim = next(m for m in await mem.list(memory_type="insight") if "swim" in m.content)
    await mem.mark_noise(swim.id)
    out["after_noise"] = sorted(m.content for m in await mem.list(memory_type="insight"))
    updated = await mem.update(berlin.id, content="I moved to Lisbon in 2025")
    out["updated"] = (updated.content, updated.version)
    out["get"] = (await mem.get(berlin.id)).content
    out["history"] = [h["action"] for h in await mem.history(berlin.id)]
    out["list"] = sorted(m.content for m in await mem.list())
    out["sessions"] = len(await mem.list(memory_type="session"))
    out["stats_total"] = (await mem.stats())["total"]
    out["exported"] = await mem.export(tmp / "export.jsonl")
    out["reimport"] = await mem.import_(tmp / "export.jsonl")
    out["dry_run"] = await mem.batch_delete(tags=["city"])
    with pytest.raises(ValidationError):
        await mem.add("")
    with pytest.raises(NotFoundError):
        await mem.get("no-such-id")
    with pytest.raises(ValidationError):
        await mem.delete_all()
    await mem.delete(berlin.id)
    out["deleted_state"] = (await mem.get(berlin.id)).state.value
    out["delete_all"] = await mem.delete_all(confirm=True)
    return out


def test_asyncio_clients_agree_with_the_sync_ones(
    server: RunningServer,
    make_tenant: Callable[..., TenantClient],
    tmp_path: Path,
    embedder: LocalEmbedder,
) -> None:
    for name in ("sync", "async-local", "async-remote"):
        (tmp_path / name).mkdir()
    with Memory(tmp_path / "home-sync", embedder=embedder) as local:
        expected = _script(local, tmp_path / "sync")

    async def both() -> tuple[dict[str, Any], dict[str, Any]]:
        async with AsyncMemory(tmp_path / "home-async", embedder=embedder) as mem:
            embedded = await _async_script(mem, tmp_path / "async-local")
        async with AsyncRemoteMemory(server.url, make_tenant("async").key) as remote:
            served = await _async_script(remote, tmp_path / "async-remote")
        return embedded, served

    embedded, served = asyncio.run(both())
    assert embedded == expected
    assert served == expected


def test_remote_clients_check_messages_and_user_ids(
    server: RunningServer, alice: TenantClient
) -> None:
    with RemoteMemory(server.url, alice.key) as mem:
        with pytest.raises(ValidationError, match="messages must be a list"):
            mem.ingest("hello")  # type: ignore[arg-type]
        with pytest.raises(ValidationError, match="limit"):
            mem.search("x", limit="five")
        with pytest.raises(ValidationError, match="each user is a tenant"):
            mem.add("x", user_id="bob")  # type: ignore[call-arg]
        # an option only an embedded store takes is refused, not dropped on the way
        with pytest.raises(ValidationError, match=r"unknown option.*created_after"):
            mem.search("x", created_after="2026-01-01")  # type: ignore[call-arg]
        with pytest.raises(ValidationError, match=r"unknown option.*l1_overview"):
            mem.add("x", l1_overview="a summary")  # type: ignore[call-arg]


def _plain(value: Any) -> Any:
    """A task answer without its times (each store stamps its own)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items() if not k.endswith("_at")}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _tasks_script(tasks: Any) -> list[Any]:
    """What agent "a" does with collaboration tasks: each answer, or the error's kind."""
    steps: list[Callable[[], Any]] = [
        lambda: tasks.create("launch", "Ship v2"),
        lambda: tasks.create("launch", "again"),  # there already: not made twice
        lambda: tasks.get("launch"),
        lambda: tasks.list(),
        lambda: tasks.list("b"),
        lambda: tasks.join("launch", "b"),  # an agent acts for itself only
        lambda: tasks.leave("launch"),
        lambda: tasks.leave("launch"),  # no longer a member
        lambda: tasks.join("launch"),
        lambda: tasks.get("nope"),
        lambda: tasks.create("bad/id"),
        lambda: tasks.delete("launch"),  # the owner's to delete, not an agent's
    ]
    out: list[Any] = []
    for step in steps:
        try:
            out.append(_plain(step()))
        except MemorydError as exc:
            out.append(type(exc).__name__)
    return out


class _Blocking:
    """An asyncio task API called step by step on one event loop, for the sync script."""

    def __init__(self, tasks: Any, loop: asyncio.AbstractEventLoop) -> None:
        self.tasks, self.loop = tasks, loop

    def __getattr__(self, name: str) -> Callable[..., Any]:
        method = getattr(self.tasks, name)
        return lambda *args: self.loop.run_until_complete(method(*args))


def test_remote_tasks_agree_with_the_embedded_ones(
    server: RunningServer,
    make_tenant: Callable[..., TenantClient],
    tmp_path: Path,
    embedder: LocalEmbedder,
) -> None:
    with Memory(tmp_path / "home", embedder=embedder, agent_id="a") as local:
        expected = _tasks_script(local.tasks)
    assert expected[0][1] is True and expected[1][1] is False
    assert expected[5] == "ForbiddenError" and expected[7] == expected[9] == "NotFoundError"
    assert expected[10] == "ValidationError" and expected[11] == "ForbiddenError"
    with RemoteMemory(server.url, make_tenant("tasks-sync").key, agent_id="a") as remote:
        assert _tasks_script(remote.tasks) == expected
    loop = asyncio.new_event_loop()
    try:
        remote_async = AsyncRemoteMemory(server.url, make_tenant("tasks-async").key, agent_id="a")
        assert _tasks_script(_Blocking(remote_async.tasks, loop)) == expected
        loop.run_until_complete(remote_async.close())
    finally:
        loop.close()
    with RemoteMemory(server.url, make_tenant("tasks-owner").key) as owner:
        owner.tasks.create("launch")
        with pytest.raises(ValidationError, match="agent_id is required"):
            owner.tasks.leave("launch")  # the owner names the agent
        assert owner.tasks.join("launch", "b")["members"] == ["b"]
        assert owner.tasks.delete("launch")["members"] == ["b"]
        assert owner.tasks.list() == []
        with pytest.raises(NotFoundError):
            owner.tasks.delete("launch")
