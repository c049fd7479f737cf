"""The store a hook talks to: the embedded home, or a memoryd server.

Both answer the few questions a hook asks with the same types, so a hook
does not care which one it has. The remote one gives up on the first call
that cannot reach the server: a hook that found the server down must not
spend its budget finding it down again for every other call.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from memoryd.client import RemoteMemory, ServerError
from memoryd.continuity import Continuity, Owner
from memoryd.continuity.mechanical import Event
from memoryd.continuity.service import event_data
from memoryd.errors import ValidationError
from memoryd.hooks.config import HookConfig
from memoryd.hooks.detach import spawn_memoryd
from memoryd.models import Memory as MemoryRecord
from memoryd.models import ScoredMemory
from memoryd.sdk import Memory
from memoryd.store.scopes import is_part

log = logging.getLogger(__name__)

SOURCE = "claude-code"
T = TypeVar("T")


@dataclass(frozen=True)
class Captured:
    """What a capture left behind: ``pending`` when an embedded task is still unfinished."""

    task_id: str
    stored_count: int
    status: str
    pending: bool = False


class HookBackend(Protocol):
    describe: str

    def profile(self) -> dict[str, Any]: ...

    def recent(self, limit: int) -> list[MemoryRecord]: ...

    def search(
        self, query: str, limit: int, exclude_session: str | None = None
    ) -> list[ScoredMemory]: ...

    def remember(self, content: str, *, tags: list[str], key: str) -> MemoryRecord: ...

    def capture(
        self,
        messages: list[dict[str, Any]],
        *,
        session_id: str | None,
        tags: list[str],
        wait_s: float,
    ) -> Captured: ...

    def save_checkpoint(self, owner: Owner, events: list[Event], trigger: str) -> str: ...

    def summarize_checkpoint(self, checkpoint_id: str) -> None: ...

    def restore(self, agent_id: str, project: str) -> str: ...

    def consolidate_session(self, owner: Owner) -> None: ...

    def close(self) -> None: ...


class EmbeddedBackend:
    """A local home. Smart ingest runs in this process's task worker.

    ``background``: this process is one nobody waits for (``memoryd hook
    handed-off``), so a checkpoint's summary and a session's consolidation
    run here rather than in a process of their own.
    """

    def __init__(self, memory: Memory, *, background: bool = False) -> None:
        self.memory = memory
        self.background = background
        self.describe = f"embedded store at {memory.service.home}"

    def profile(self) -> dict[str, Any]:
        return self.memory.profile()

    def recent(self, limit: int) -> list[MemoryRecord]:
        return self.memory.list(limit=limit, current=True)  # what holds now, nothing replaced

    def search(
        self, query: str, limit: int, exclude_session: str | None = None
    ) -> list[ScoredMemory]:
        return self.memory.search(query, limit=limit, exclude_session=exclude_session)

    def remember(self, content: str, *, tags: list[str], key: str) -> MemoryRecord:
        return self.memory.add(content, tags=tags, source=SOURCE, key=key)

    def capture(
        self,
        messages: list[dict[str, Any]],
        *,
        session_id: str | None,
        tags: list[str],
        wait_s: float,
    ) -> Captured:
        """Store the turns now; wait up to ``wait_s`` for the extraction, no longer.

        A task still queued or running after that is ``pending``: the caller
        hands it on rather than let closing the store wait for it.
        """
        result = self.memory.ingest(
            messages, mode="smart", session_id=session_id, tags=tags, source=SOURCE
        )
        try:
            status = str(self.memory.wait_for_task(result.task_id, wait_s)["status"])
        except ValidationError:  # still queued or running
            status = str(self.memory.task(result.task_id)["status"])
        pending = status not in ("completed", "failed")
        return Captured(result.task_id, result.stored_count, status, pending)

    def save_checkpoint(self, owner: Owner, events: list[Event], trigger: str) -> str:
        continuity = Continuity(self.memory.service)
        return continuity.save(owner, events, trigger=trigger, summarize_now=False).id

    def summarize_checkpoint(self, checkpoint_id: str) -> None:
        """With an LLM configured, a detached process asks it: the hook does not wait."""
        settings = self.memory.service.settings
        if not (settings.llm_base_url and settings.llm_model):  # as create_llm decides
            return
        if self.background:
            self.summarize_now(checkpoint_id)
            return
        spawn_memoryd(
            ["hook", "summarize", "--checkpoint", checkpoint_id], self.memory.service.home
        )
        log.info("checkpoint %s: summary handed to a background process", checkpoint_id)

    def summarize_now(self, checkpoint_id: str) -> None:
        """Ask the LLM for the checkpoint's summary and wait for it."""
        summary = Continuity(self.memory.service).summarize(checkpoint_id).summary
        log.info(
            "summarize: checkpoint %s has a %s summary",
            checkpoint_id,
            summary.source if summary else "no",
        )

    def restore(self, agent_id: str, project: str) -> str:
        return Continuity(self.memory.service, llm=None).restore(agent_id, project)

    def consolidate_session(self, owner: Owner) -> None:
        """Condense the ended session's layers in a detached process: the hook does not wait."""
        if self.background:
            self.consolidate_now(owner.agent_id, owner.session_id)
            return
        args = ["hook", "consolidate", "--agent", owner.agent_id, "--session", owner.session_id]
        spawn_memoryd(args, self.memory.service.home)
        log.info("session %s: consolidation handed to a background process", owner.session_id)

    def consolidate_now(self, agent_id: str, session_id: str) -> None:
        """Condense the session's layers, then the resting sessions', and apply retention."""
        from memoryd.continuity.layers import SessionLayers
        from memoryd.continuity.worker import run_pass

        done = SessionLayers(self.memory.service).consolidate(agent_id, session_id)
        run_pass(self.memory.service)
        log.info("consolidate: session %s has %d kept layers", session_id, len(done))

    def close(self) -> None:
        self.memory.close()


class RemoteBackend:
    """A memoryd (or ourmem) server; its own worker runs smart ingest."""

    def __init__(
        self,
        url: str,
        api_key: str | None,
        timeout_s: float,
        agent_id: str | None = None,
        session_id: str | None = None,
    ) -> None:
        self.remote = RemoteMemory(
            url, api_key, agent_id=agent_id, session_id=session_id, timeout=timeout_s
        )
        self.describe = f"server at {url}"
        self._down: ServerError | None = None

    def _reach(self, call: Callable[[], T]) -> T:
        """``call`` against the server, unless an earlier call found it unreachable."""
        if self._down is not None:
            raise ServerError(f"skipped: {self._down.message}")
        try:
            return call()
        except ServerError as exc:
            self._down = exc
            raise

    def profile(self) -> dict[str, Any]:
        return self._reach(self.remote.profile)

    def recent(self, limit: int) -> list[MemoryRecord]:
        return self._reach(lambda: self.remote.list(limit=limit, offset=0, current=True))

    def search(
        self, query: str, limit: int, exclude_session: str | None = None
    ) -> list[ScoredMemory]:
        return self._reach(
            lambda: self.remote.search(query, limit=limit, exclude_session=exclude_session)
        )

    def remember(self, content: str, *, tags: list[str], key: str) -> MemoryRecord:
        return self._reach(lambda: self.remote.add(content, tags=tags, source=SOURCE, key=key))

    def capture(
        self,
        messages: list[dict[str, Any]],
        *,
        session_id: str | None,
        tags: list[str],
        wait_s: float,
    ) -> Captured:
        """Send the turns; the server extracts in the background: nothing to wait for."""
        result = self._reach(
            lambda: self.remote.ingest(
                messages, mode="smart", session_id=session_id, tags=tags, source=SOURCE
            )
        )
        return Captured(result.task_id, result.stored_count, "sent")

    def save_checkpoint(self, owner: Owner, events: list[Event], trigger: str) -> str:
        body = {
            "agent_id": owner.agent_id,
            "session_id": owner.session_id,
            "project": owner.project,
            "trigger": trigger,
            "events": [event_data(e) for e in events],
            "summarize": False,
        }
        return str(
            self._reach(lambda: self.remote.request("POST", "/v1/checkpoints", json=body))["id"]
        )

    def summarize_checkpoint(self, checkpoint_id: str) -> None:
        self._reach(
            lambda: self.remote.request(
                "POST", f"/v1/checkpoints/{checkpoint_id}/summarize", params={"wait": "false"}
            )
        )

    def consolidate_session(self, owner: Owner) -> None:
        """The server's session worker condenses resting sessions: nothing to ask for."""

    def restore(self, agent_id: str, project: str) -> str:
        params = {"agent_id": agent_id, "project": project}
        answer = self._reach(
            lambda: self.remote.request("GET", "/v1/checkpoints/restore", params=params)
        )
        return str(answer.get("text") or "")

    def close(self) -> None:
        self.remote.close()


def host_session(payload: dict[str, Any]) -> str | None:
    """The host's session id from a hook payload, when it can name a session scope."""
    session = payload.get("session_id")
    return session if isinstance(session, str) and session and is_part(session) else None


def open_backend(
    config: HookConfig, session: str | None = None, *, background: bool = False
) -> HookBackend:
    """The store as the hooks' agent (``MEMORYD_AGENT_ID``, default ``claude-code``) in the
    host's session: recall sees that agent's scopes only (docs/continuity.md).
    ``background``: see :class:`EmbeddedBackend`."""
    if config.url:
        return RemoteBackend(
            config.url, config.api_key, config.http_timeout_s, config.agent_id, session
        )
    memory = Memory(config.home, agent_id=config.agent_id, session_id=session)
    return EmbeddedBackend(memory, background=background)
