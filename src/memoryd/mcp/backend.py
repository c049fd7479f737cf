"""Where the MCP tools get their memories: a local home, or a memoryd server.

Both backends answer in the wire shapes of the REST API (reference §2 and
§4), so a tool formats one result the same way whichever backend served it,
and an agent sees the same JSON from an embedded store as from a server.
The calls are blocking (SQLite, the embedding model, HTTP); the MCP server
runs them in worker threads.
"""

from __future__ import annotations

import logging
import threading
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any
from urllib.parse import quote

from memoryd.client import DEFAULT_TIMEOUT_S, RemoteMemory
from memoryd.continuity import Continuity, Owner
from memoryd.continuity.layers import SessionLayers
from memoryd.continuity.service import dump
from memoryd.errors import ValidationError
from memoryd.imports.service import start_import_worker
from memoryd.models import wire
from memoryd.omniroute import clear_entries
from memoryd.profile import build_profile
from memoryd.service import LOCAL_TENANT, MemoryService

log = logging.getLogger(__name__)
Json = dict[str, Any]
WARM_UP_JOIN_S = 30.0


class Backend(ABC):
    """The operations of the MCP tools, one method each, JSON in the REST shapes."""

    #: a line for logs and errors: which store the tools work on
    describe: str = ""

    # ------------------------------------------------------------------ memories
    @abstractmethod
    def store(
        self, content: str, tags: list[str], source: str, scope: str | None = None
    ) -> Json: ...

    @abstractmethod
    def search(self, query: str, limit: int, scope: str | None, tags: list[str] | None) -> Json: ...

    @abstractmethod
    def forget(self, memory_id: str) -> Json: ...

    @abstractmethod
    def get(self, memory_id: str) -> Json: ...

    @abstractmethod
    def update(self, memory_id: str, content: str, tags: list[str] | None) -> Json: ...

    @abstractmethod
    def profile(self) -> Json: ...

    @abstractmethod
    def list_recent(self, limit: int) -> Json: ...

    @abstractmethod
    def ingest(self, messages: list[Json], mode: str, tags: list[str] | None) -> Json: ...

    @abstractmethod
    def stats(self) -> Json: ...

    # ------------------------------------------------------------------ sharing
    @abstractmethod
    def space_create(self, name: str, space_type: str, members: list[Json] | None) -> Json: ...

    @abstractmethod
    def space_list(self) -> Json: ...

    @abstractmethod
    def space_add_member(self, space_id: str, user_id: str, role: str) -> Json: ...

    @abstractmethod
    def share(self, memory_id: str, target_space: str) -> Json: ...

    @abstractmethod
    def pull(self, memory_id: str, source_space: str, visibility: str | None) -> Json: ...

    @abstractmethod
    def reshare(self, memory_id: str, target_space: str | None) -> Json: ...

    # ------------------------------------------------------------------ continuity
    @abstractmethod
    def checkpoint_save(
        self, agent_id: str, session_id: str, project: str, events: list[Json], trigger: str
    ) -> Json: ...

    @abstractmethod
    def checkpoint_restore(self, agent_id: str, project: str | None) -> Json: ...

    @abstractmethod
    def clear(self, memory_type: str | None, older_than: str | None, everything: bool) -> Json:
        """Delete memories by OmniRoute type and age (see memoryd.omniroute)."""

    @abstractmethod
    def lcm_grep(self, conversation_id: str, query: str, limit: int) -> Json: ...

    @abstractmethod
    def lcm_expand(
        self, conversation_id: str, summary_id: str | None, query: str | None
    ) -> Json: ...

    @abstractmethod
    def session_layers(self, agent_id: str | None, session_id: str | None) -> Json: ...

    # ------------------------------------------------------------------ tasks (scopes)
    @abstractmethod
    def task_list(self, agent_id: str | None) -> Json: ...

    @abstractmethod
    def task_create(self, task_id: str | None, title: str) -> Json: ...

    @abstractmethod
    def task_join(self, task_id: str, agent_id: str | None) -> Json: ...

    @abstractmethod
    def task_leave(self, task_id: str, agent_id: str | None) -> Json: ...

    @abstractmethod
    def close(self) -> None:
        """Release what the backend holds; the server calls it once, on shutdown."""


class EmbeddedBackend(Backend):
    """A home on this machine, as the local tenant: no server, no key.

    It calls the same services as the REST routes, so a memory stored here
    is the one ``memoryd search`` and ``memoryd serve`` see in that home.
    With ``agent_id`` (and ``session_id``) every tool acts as that agent.
    """

    def __init__(
        self,
        home: Path | str | None = None,
        *,
        warm_up: bool = True,
        agent_id: str | None = None,
        session_id: str | None = None,
    ) -> None:
        self.root = MemoryService(home, tenant_id=LOCAL_TENANT)
        self.service = self.root if agent_id is None else self.root.for_agent(agent_id, session_id)
        self.describe = f"embedded store at {self.service.home}"
        if agent_id is not None:
            self.describe += f", as agent {agent_id}"
        self._warming: threading.Thread | None = None
        if warm_up:  # the model loads in ~1 s: not on the agent's first call, if we can help it
            self._warming = threading.Thread(
                target=self._warm_up, name="memoryd-mcp-warm", daemon=True
            )
            self._warming.start()

    def _warm_up(self) -> None:
        """Load the model, then run queued work of this home while the session lasts.

        An agent host keeps the MCP server running for the whole session: the
        natural place to finish smart-ingest tasks and imports that hooks or a
        stopped process left queued in an embedded home.
        """
        try:
            _ = self.root.embedder
            self.root.start_worker()
            start_import_worker(self.root)
        except Exception as exc:  # the first tool call reports it properly
            log.warning("could not load the embedding model yet: %s", exc)

    def store(self, content: str, tags: list[str], source: str, scope: str | None = None) -> Json:
        return self.service.add(content, tags=tags, source=source, scope=scope).to_json()

    def search(self, query: str, limit: int, scope: str | None, tags: list[str] | None) -> Json:
        found = self.service.search(query, limit=limit, scope=scope, tags=tags)
        return {
            "results": [{"memory": r.memory.to_json(), "score": r.score} for r in found.results]
        }

    def forget(self, memory_id: str) -> Json:
        self.service.delete(memory_id)
        return {"status": "deleted"}

    def get(self, memory_id: str) -> Json:
        return self.service.get(memory_id).to_json()

    def update(self, memory_id: str, content: str, tags: list[str] | None) -> Json:
        changes: Json = {"content": content}
        if tags is not None:
            changes["tags"] = tags
        return self.service.update(memory_id, **changes).to_json()

    def profile(self) -> Json:
        return build_profile(self.service)

    def list_recent(self, limit: int) -> Json:
        rows, total = self.service.list_memories(limit=limit, offset=0)
        return {
            "memories": [m.to_json() for m in rows],
            "total_count": total,
            "limit": limit,
            "offset": 0,
        }

    def clear(self, memory_type: str | None, older_than: str | None, everything: bool) -> Json:
        return clear_entries(self.service, memory_type, older_than, everything)

    def lcm_grep(self, conversation_id: str, query: str, limit: int) -> Json:
        from memoryd.context import ContextEngine

        hits = ContextEngine(self.service).grep(conversation_id, query, limit)
        return {"hits": [h.to_json() for h in hits]}

    def lcm_expand(self, conversation_id: str, summary_id: str | None, query: str | None) -> Json:
        from memoryd.context import ContextEngine

        return ContextEngine(self.service).expand(conversation_id, summary_id, query)

    def ingest(self, messages: list[Json], mode: str, tags: list[str] | None) -> Json:
        result = self.service.ingest(messages, mode=mode, tags=tags)
        data: Json = result.model_dump()
        return data

    def stats(self) -> Json:
        return self.service.stats()

    def space_create(self, name: str, space_type: str, members: list[Json] | None) -> Json:
        return _space(self.service.spaces.create(name, space_type, members))

    def space_list(self) -> Json:
        return {"spaces": [_space(s) for s in self.service.spaces.list_spaces()]}

    def space_add_member(self, space_id: str, user_id: str, role: str) -> Json:
        return _space(self.service.spaces.add_member(space_id, user_id, role))

    def share(self, memory_id: str, target_space: str) -> Json:
        copy, _ = self.service.sharing.share(memory_id, target_space)
        return copy.to_json()

    def pull(self, memory_id: str, source_space: str, visibility: str | None) -> Json:
        return self.service.sharing.pull(memory_id, source_space, visibility).to_json()

    def reshare(self, memory_id: str, target_space: str | None) -> Json:
        return self.service.sharing.reshare(memory_id, target_space).to_json()

    def checkpoint_save(
        self, agent_id: str, session_id: str, project: str, events: list[Json], trigger: str
    ) -> Json:
        owner = Owner(agent_id, session_id, project)
        return dump(Continuity(self.service).save(owner, events, trigger=trigger))

    def checkpoint_restore(self, agent_id: str, project: str | None) -> Json:
        continuity = Continuity(self.service, llm=None)
        latest = continuity.latest(agent_id, project)
        text = "" if latest is None else continuity.render(latest)
        return {"text": text, "checkpoint_id": None if latest is None else latest.id}

    def session_layers(self, agent_id: str | None, session_id: str | None) -> Json:
        found = SessionLayers(self.service, llm=None).layers(agent_id, session_id)
        return {"layers": wire(found)}

    def task_list(self, agent_id: str | None) -> Json:
        return {"tasks": wire(self.service.tasks.list(agent_id))}

    def task_create(self, task_id: str | None, title: str) -> Json:
        task, _ = self.service.tasks.create(task_id, title)
        data: Json = wire(task)
        return data

    def task_join(self, task_id: str, agent_id: str | None) -> Json:
        data: Json = wire(self.service.tasks.join(task_id, agent_id))
        return data

    def task_leave(self, task_id: str, agent_id: str | None) -> Json:
        data: Json = wire(self.service.tasks.leave(task_id, agent_id))
        return data

    def close(self) -> None:
        if self._warming is not None:  # a session that ends at once: not mid-load
            self._warming.join(timeout=WARM_UP_JOIN_S)
        self.root.close()


class RemoteBackend(Backend):
    """A memoryd (or ourmem) server over its REST API, as the tenant of the API key.

    ``RemoteMemory`` does the HTTP and turns the server's error bodies back
    into memoryd errors, so a 404 there is the same ``NotFoundError`` as here.
    """

    def __init__(
        self,
        url: str,
        api_key: str | None = None,
        *,
        timeout: float = DEFAULT_TIMEOUT_S,
        agent_id: str | None = None,
        session_id: str | None = None,
    ) -> None:
        self.url = url.rstrip("/")
        self.remote = RemoteMemory(
            self.url, api_key, agent_id=agent_id, session_id=session_id, timeout=timeout
        )
        self.describe = f"memoryd server at {self.url}"
        if agent_id is not None:
            self.describe += f", as agent {agent_id}"

    def _call(self, method: str, path: str, **kwargs: Any) -> Json:
        data = self.remote.request(method, path, **kwargs)
        if not isinstance(data, dict):
            raise ValidationError(f"the server answered {method} {path} with {str(data)[:200]!r}")
        return data

    def store(self, content: str, tags: list[str], source: str, scope: str | None = None) -> Json:
        body: Json = {"content": content, "tags": tags, "source": source}
        if scope is not None:
            body["scope"] = scope
        return self._call("POST", "/v1/memories", json=body)

    def search(self, query: str, limit: int, scope: str | None, tags: list[str] | None) -> Json:
        params: Json = {"q": query, "limit": limit}
        if scope:
            params["scope"] = scope
        if tags:  # memoryd's filter; ``tags`` itself is ignored on search, as in ourmem
            params["filter_tags"] = ",".join(tags)
        return self._call("GET", "/v1/memories/search", params=params)

    def forget(self, memory_id: str) -> Json:
        return self._call("DELETE", f"/v1/memories/{_seg(memory_id)}")

    def get(self, memory_id: str) -> Json:
        return self._call("GET", f"/v1/memories/{_seg(memory_id)}")

    def update(self, memory_id: str, content: str, tags: list[str] | None) -> Json:
        body: Json = {"content": content}
        if tags is not None:
            body["tags"] = tags
        return self._call("PUT", f"/v1/memories/{_seg(memory_id)}", json=body)

    def profile(self) -> Json:
        return self.remote.profile()

    def list_recent(self, limit: int) -> Json:
        return self._call("GET", "/v1/memories", params={"limit": limit, "offset": 0})

    def clear(self, memory_type: str | None, older_than: str | None, everything: bool) -> Json:
        body: Json = {"all": everything}
        if memory_type:
            body["type"] = memory_type
        if older_than:
            body["olderThan"] = older_than
        return self._call("POST", "/api/memory/clear", json=body)

    def ingest(self, messages: list[Json], mode: str, tags: list[str] | None) -> Json:
        body: Json = {"messages": messages, "mode": mode}
        if tags is not None:
            body["tags"] = tags
        return self._call("POST", "/v1/memories", json=body)

    def stats(self) -> Json:
        return self._call("GET", "/v1/stats")

    def space_create(self, name: str, space_type: str, members: list[Json] | None) -> Json:
        body: Json = {"name": name, "space_type": space_type}
        if members is not None:
            body["members"] = members
        return self._call("POST", "/v1/spaces", json=body)

    def space_list(self) -> Json:
        data = self.remote.request("GET", "/v1/spaces")
        # ourmem answers a bare array (reference §6.1), memoryd {"spaces": [...]}
        return {"spaces": data} if isinstance(data, list) else dict(data)

    def space_add_member(self, space_id: str, user_id: str, role: str) -> Json:
        body = {"user_id": user_id, "role": role}
        return self._call("POST", f"/v1/spaces/{_seg(space_id)}/members", json=body)

    def share(self, memory_id: str, target_space: str) -> Json:
        body = {"target_space": target_space}
        return self._call("POST", f"/v1/memories/{_seg(memory_id)}/share", json=body)

    def pull(self, memory_id: str, source_space: str, visibility: str | None) -> Json:
        body: Json = {"source_space": source_space}
        if visibility is not None:
            body["visibility"] = visibility
        return self._call("POST", f"/v1/memories/{_seg(memory_id)}/pull", json=body)

    def reshare(self, memory_id: str, target_space: str | None) -> Json:
        body: Json = {} if target_space is None else {"target_space": target_space}
        return self._call("POST", f"/v1/memories/{_seg(memory_id)}/reshare", json=body)

    def checkpoint_save(
        self, agent_id: str, session_id: str, project: str, events: list[Json], trigger: str
    ) -> Json:
        body: Json = {
            "agent_id": agent_id,
            "session_id": session_id,
            "project": project,
            "events": events,
            "trigger": trigger,
        }
        return self._call("POST", "/v1/checkpoints", json=body)

    def checkpoint_restore(self, agent_id: str, project: str | None) -> Json:
        params: Json = {"agent_id": agent_id}
        if project is not None:
            params["project"] = project
        return self._call("GET", "/v1/checkpoints/restore", params=params)

    def lcm_grep(self, conversation_id: str, query: str, limit: int) -> Json:
        body: Json = {"query": query, "limit": limit}
        return self._call("POST", f"/v1/context/{_seg(conversation_id)}/grep", json=body)

    def lcm_expand(self, conversation_id: str, summary_id: str | None, query: str | None) -> Json:
        body: Json = {"summary_id": summary_id, "query": query}
        return self._call("POST", f"/v1/context/{_seg(conversation_id)}/expand", json=body)

    def session_layers(self, agent_id: str | None, session_id: str | None) -> Json:
        params = {k: v for k, v in (("agent_id", agent_id), ("session_id", session_id)) if v}
        return self._call("GET", "/v1/session-layers", params=params)

    def task_list(self, agent_id: str | None) -> Json:
        params = {} if agent_id is None else {"agent_id": agent_id}
        return self._call("GET", "/v1/tasks", params=params)

    def task_create(self, task_id: str | None, title: str) -> Json:
        body: Json = {"title": title} if task_id is None else {"id": task_id, "title": title}
        return self._call("POST", "/v1/tasks", json=body)

    def task_join(self, task_id: str, agent_id: str | None) -> Json:
        body: Json = {} if agent_id is None else {"agent_id": agent_id}
        return self._call("POST", f"/v1/tasks/{_seg(task_id)}/members", json=body)

    def task_leave(self, task_id: str, agent_id: str | None) -> Json:
        agent = agent_id or self.remote.agent_id
        if agent is None:
            raise ValidationError("agent_id is required (or act as an agent)")
        return self._call("DELETE", f"/v1/tasks/{_seg(task_id)}/members/{_seg(agent)}")

    def close(self) -> None:
        self.remote.close()


def _space(space: Any) -> Json:
    data: Json = wire(space)
    return data


def _seg(value: str) -> str:
    """One path segment, percent-encoded: a space id's slash or a stray ``../`` stays inside it."""
    return quote(value, safe="")
