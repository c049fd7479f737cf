"""Collaboration tasks through a server: ``RemoteMemory.tasks`` and its asyncio twin.

The same methods, arguments and answers as the embedded store's
:class:`memoryd.continuity.tasks.AgentTasks`, over ``/v1/tasks``. A client
made with ``agent_id`` acts as that agent (``X-Agent-Id``): it joins and
leaves for itself only, and a task it creates it joins.
"""

from __future__ import annotations

import builtins
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar
from urllib.parse import quote

from memoryd.errors import ValidationError
from memoryd.remote_call import Call

R = TypeVar("R")
Task = dict[str, Any]


def _task(data: Any) -> Task:
    task: Task = data
    return task


def _created(answer: tuple[Any, int]) -> tuple[Task, bool]:
    data, status = answer
    return _task(data), status == 201


def _tasks(data: Any) -> builtins.list[Task]:
    tasks: builtins.list[Task] = data["tasks"]
    return tasks


def _part(value: str) -> str:
    """A task or agent id as one path segment (the server checks what it may hold)."""
    return quote(value, safe="")


class TaskCalls:
    """The requests behind each method; ``agent_id`` is the client's own agent, if any."""

    def __init__(self, agent_id: str | None) -> None:
        self.agent_id = agent_id

    def create(self, task_id: str | None, title: str) -> Call[tuple[Task, bool]]:
        body: dict[str, Any] = {"title": title}
        if task_id is not None:
            body["id"] = task_id
        return Call("POST", "/v1/tasks", _created, {"json": body}, with_status=True)

    def get(self, task_id: str) -> Call[Task]:
        return Call("GET", f"/v1/tasks/{_part(task_id)}/members", _task)

    def list(self, agent_id: str | None) -> Call[builtins.list[Task]]:
        params = {} if agent_id is None else {"agent_id": agent_id}
        return Call("GET", "/v1/tasks", _tasks, {"params": params})

    def join(self, task_id: str, agent_id: str | None) -> Call[Task]:
        body = {} if agent_id is None else {"agent_id": agent_id}
        return Call("POST", f"/v1/tasks/{_part(task_id)}/members", _task, {"json": body})

    def leave(self, task_id: str, agent_id: str | None) -> Call[Task]:
        agent = agent_id or self.agent_id
        if agent is None:
            raise ValidationError("agent_id is required (or act as an agent)")
        return Call("DELETE", f"/v1/tasks/{_part(task_id)}/members/{_part(agent)}", _task)

    def delete(self, task_id: str) -> Call[Task]:
        return Call("DELETE", f"/v1/tasks/{_part(task_id)}", _task)


class RemoteTasks:
    """A server's collaboration tasks; see :class:`memoryd.continuity.tasks.AgentTasks`."""

    def __init__(self, send: Callable[[Call[Any]], Any], agent_id: str | None) -> None:
        self._send = send
        self._calls = TaskCalls(agent_id)

    def create(self, task_id: str | None = None, title: str = "") -> tuple[Task, bool]:
        """The task (made now unless the tenant has it already) and whether it was made."""
        created: tuple[Task, bool] = self._send(self._calls.create(task_id, title))
        return created

    def get(self, task_id: str) -> Task:
        task: Task = self._send(self._calls.get(task_id))
        return task

    def list(self, agent_id: str | None = None) -> builtins.list[Task]:
        """Every task of the tenant, or those ``agent_id`` takes part in."""
        tasks: builtins.list[Task] = self._send(self._calls.list(agent_id))
        return tasks

    def join(self, task_id: str, agent_id: str | None = None) -> Task:
        task: Task = self._send(self._calls.join(task_id, agent_id))
        return task

    def leave(self, task_id: str, agent_id: str | None = None) -> Task:
        """End the membership; an agent that was not a member is a ``not_found``."""
        task: Task = self._send(self._calls.leave(task_id, agent_id))
        return task

    def delete(self, task_id: str) -> Task:
        """The task as it was, deleted with its memberships (the owner's act)."""
        task: Task = self._send(self._calls.delete(task_id))
        return task


class AsyncRemoteTasks:
    """A server's collaboration tasks for asyncio code; see :class:`RemoteTasks`."""

    def __init__(self, send: Callable[[Call[Any]], Awaitable[Any]], agent_id: str | None) -> None:
        self._send = send
        self._calls = TaskCalls(agent_id)

    async def create(self, task_id: str | None = None, title: str = "") -> tuple[Task, bool]:
        created: tuple[Task, bool] = await self._send(self._calls.create(task_id, title))
        return created

    async def get(self, task_id: str) -> Task:
        task: Task = await self._send(self._calls.get(task_id))
        return task

    async def list(self, agent_id: str | None = None) -> builtins.list[Task]:
        tasks: builtins.list[Task] = await self._send(self._calls.list(agent_id))
        return tasks

    async def join(self, task_id: str, agent_id: str | None = None) -> Task:
        task: Task = await self._send(self._calls.join(task_id, agent_id))
        return task

    async def leave(self, task_id: str, agent_id: str | None = None) -> Task:
        task: Task = await self._send(self._calls.leave(task_id, agent_id))
        return task

    async def delete(self, task_id: str) -> Task:
        task: Task = await self._send(self._calls.delete(task_id))
        return task
