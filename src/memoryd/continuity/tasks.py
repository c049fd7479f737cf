"""Collaboration tasks: agents join and leave them, and see the memories scoped to them.

``AgentTasks`` is what the doors call (``Memory.tasks``, ``/v1/tasks``,
``memoryd task``, the MCP task tools), and ``writable_scope`` is the one
check every write of a scope passes: an agent may write into ``global``,
a task it takes part in, its own agent scope and its current session,
never into a scope it cannot see. The owner's view (no agent) may write
any scope of its own, but a task must exist.
"""

from __future__ import annotations

from typing import Any

from memoryd.errors import ForbiddenError, NotFoundError, ValidationError
from memoryd.models import new_id
from memoryd.store.protocol import Store
from memoryd.store.scopes import AGENT, SESSION, TASK, Scope, Viewer, check_part, parse_scope

MAX_TITLE_CHARS = 500


class AgentTasks:
    """One tenant's tasks, as its owner (``viewer`` None) or as one of its agents."""

    def __init__(self, store: Store, tenant_id: str, viewer: Viewer | None = None) -> None:
        self.store = store
        self.tenant_id = tenant_id
        self.viewer = viewer

    def _agent(self, agent_id: str | None) -> str:
        """The agent a join or leave is for: an agent view acts for itself only."""
        viewer = self.viewer
        if viewer is None:
            if agent_id is None:
                raise ValidationError("agent_id is required (or act as an agent)")
            return check_part("agent id", agent_id)
        if agent_id is not None and agent_id != viewer.agent_id:
            raise ForbiddenError(f"agent {viewer.agent_id} cannot act for agent {agent_id}")
        return viewer.agent_id

    def create(self, task_id: str | None = None, title: str = "") -> tuple[dict[str, Any], bool]:
        """The task (made now unless the tenant has it already) and whether it was made.

        An agent that creates a task takes part in it.
        """
        task_id = new_id() if task_id is None else check_part("task id", task_id)
        if not isinstance(title, str) or len(title) > MAX_TITLE_CHARS:
            raise ValidationError(f"title must be text of at most {MAX_TITLE_CHARS} characters")
        created = self.store.create_agent_task(self.tenant_id, task_id, title)
        if self.viewer is not None:
            self.store.join_agent_task(self.tenant_id, task_id, self.viewer.agent_id)
        return self.get(task_id), created

    def get(self, task_id: str) -> dict[str, Any]:
        task = self.store.get_agent_task(self.tenant_id, check_part("task id", task_id))
        if task is None:
            raise NotFoundError(f"task {task_id}")
        return task

    def list(self, agent_id: str | None = None) -> list[dict[str, Any]]:
        """Every task of the tenant, or those ``agent_id`` takes part in."""
        agent = None if agent_id is None else check_part("agent id", agent_id)
        return self.store.list_agent_tasks(self.tenant_id, agent)

    def join(self, task_id: str, agent_id: str | None = None) -> dict[str, Any]:
        agent = self._agent(agent_id)
        task = self.get(task_id)
        self.store.join_agent_task(self.tenant_id, task["id"], agent)
        return self.get(task["id"])

    def leave(self, task_id: str, agent_id: str | None = None) -> dict[str, Any]:
        """End the membership; an agent that was not a member is a ``not_found``."""
        agent = self._agent(agent_id)
        task = self.get(task_id)
        if not self.store.leave_agent_task(self.tenant_id, task["id"], agent):
            raise NotFoundError(f"agent {agent} in task {task['id']}")
        return self.get(task["id"])

    def delete(self, task_id: str) -> dict[str, Any]:
        """The task as it was, now gone with every membership: the owner's act, not an
        agent's. Its memories stay the owner's, seen by no agent (a task made again
        with the same id gives its new members the old memories too)."""
        if self.viewer is not None:
            raise ForbiddenError(
                f"agent {self.viewer.agent_id} cannot delete task {task_id}: a task is its "
                "owner's to delete (send the request without an agent identity)"
            )
        task = self.get(task_id)
        if not self.store.delete_agent_task(self.tenant_id, task["id"]):
            raise NotFoundError(f"task {task_id}")  # deleted meanwhile
        return task

    def writable_scope(self, value: Any) -> str:
        """The stored form of a scope the caller may write into (``None``: global)."""
        scope = parse_scope("global" if value is None else value)
        viewer = self.viewer
        if scope.kind == TASK:
            assert scope.task_id is not None
            self.get(scope.task_id)
            if viewer is not None and not self.store.is_task_member(
                self.tenant_id, scope.task_id, viewer.agent_id
            ):
                raise ForbiddenError(
                    f"agent {viewer.agent_id} does not take part in task {scope.task_id}: "
                    "join it first"
                )
        elif viewer is not None and scope.kind in (AGENT, SESSION):
            session = viewer.session_id if scope.kind == SESSION else None
            own = Scope(scope.kind, agent_id=viewer.agent_id, session_id=session)
            if scope != own:
                raise ForbiddenError(
                    f"agent {viewer.agent_id} cannot write into scope {scope}: an agent writes "
                    "into global, its tasks, its own agent scope and its current session"
                )
        return str(scope)
