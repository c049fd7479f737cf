"""Collaboration tasks of agents: create, list, join, leave, delete (``task/{id}`` scopes).

A thin door over ``memoryd.continuity.tasks.AgentTasks``. ``GET
/v1/tasks/{id}`` stays the status of a background ingest job (the ourmem
contract's ``status_url``); a collaboration task is read at
``/v1/tasks/{id}/members``. With ``X-Agent-Id`` a request acts as that
agent: it joins and leaves for itself only, and a task it creates it joins.
"""

from __future__ import annotations

from fastapi import APIRouter

from memoryd.models import wire
from memoryd.server.responses import ERROR_RESPONSES, Object, TaskList
from memoryd.server.schemas import Body
from memoryd.web.deps import Caller, ok
from memoryd.web.errors import CompactJSON

router = APIRouter(tags=["tasks"], responses=ERROR_RESPONSES)


class TaskCreate(Body):
    id: str | None = None
    title: str = ""


class TaskJoin(Body):
    agent_id: str | None = None


@router.post("/v1/tasks", status_code=201, response_model=Object)
def create_task(body: TaskCreate, svc: Caller) -> CompactJSON:
    """201 with the new task; 200 with the task when the tenant has that id already."""
    task, created = svc.tasks.create(body.id, body.title)
    return ok(wire(task), 201 if created else 200)


@router.get("/v1/tasks", response_model=TaskList)
def list_tasks(svc: Caller, agent_id: str | None = None) -> CompactJSON:
    """Every task of the tenant, or those ``agent_id`` takes part in."""
    return ok({"tasks": [wire(t) for t in svc.tasks.list(agent_id)]})


@router.get("/v1/tasks/{task_id}/members", response_model=Object)
def task_members(svc: Caller, task_id: str) -> CompactJSON:
    return ok(wire(svc.tasks.get(task_id)))


@router.post("/v1/tasks/{task_id}/members", response_model=Object)
def join_task(svc: Caller, task_id: str, body: TaskJoin | None = None) -> CompactJSON:
    """The agent (the body's, else ``X-Agent-Id``'s) takes part in the task from now on."""
    return ok(wire(svc.tasks.join(task_id, None if body is None else body.agent_id)))


@router.delete("/v1/tasks/{task_id}/members/{agent_id}", response_model=Object)
def leave_task(svc: Caller, task_id: str, agent_id: str) -> CompactJSON:
    return ok(wire(svc.tasks.leave(task_id, agent_id)))


@router.delete("/v1/tasks/{task_id}", response_model=Object)
def delete_task(svc: Caller, task_id: str) -> CompactJSON:
    """The collaboration task as it was, deleted with its memberships (the owner's; an
    agent gets 403). Its memories stay, seen by the owner and no agent."""
    return ok(wire(svc.tasks.delete(task_id)))
