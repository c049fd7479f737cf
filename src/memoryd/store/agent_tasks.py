"""Collaboration tasks of agents and who takes part: the rows behind ``task/{id}`` scopes.

Not the background job queue (``store.tasks``): a task here is a unit of
work several agents of one tenant share, and its members see the memories
scoped to it (``store.scopes``). The rules (who may join, what an unknown
task answers) live in ``memoryd.continuity.tasks``.
"""

from __future__ import annotations

from typing import Any

from memoryd.models import utcnow
from memoryd.store.database import Database
from memoryd.store.rows import from_us, to_us


class AgentTaskStore(Database):
    def create_agent_task(self, tenant_id: str, task_id: str, title: str) -> bool:
        """Record a task; False when the tenant has one of that id already (it is kept)."""
        with self.write() as conn:
            cursor = conn.execute(
                "INSERT INTO agent_tasks(tenant_id, id, title, created_at) VALUES (?, ?, ?, ?) "
                "ON CONFLICT(tenant_id, id) DO NOTHING",
                (tenant_id, task_id, title, to_us(utcnow())),
            )
        return cursor.rowcount == 1

    def get_agent_task(self, tenant_id: str, task_id: str) -> dict[str, Any] | None:
        row = self.conn.execute(
            "SELECT id, title, created_at FROM agent_tasks WHERE tenant_id = ? AND id = ?",
            (tenant_id, task_id),
        ).fetchone()
        return None if row is None else self._task(tenant_id, row)

    def list_agent_tasks(self, tenant_id: str, agent_id: str | None = None) -> list[dict[str, Any]]:
        """The tenant's tasks (those ``agent_id`` is a member of, when given), oldest first."""
        sql = "SELECT t.id, t.title, t.created_at FROM agent_tasks t WHERE t.tenant_id = ?"
        params: list[Any] = [tenant_id]
        if agent_id is not None:
            sql += (
                " AND EXISTS (SELECT 1 FROM agent_task_members atm WHERE atm.tenant_id = "
                "t.tenant_id AND atm.task_id = t.id AND atm.agent_id = ?)"
            )
            params.append(agent_id)
        rows = self.conn.execute(sql + " ORDER BY t.created_at, t.id", params).fetchall()
        return [self._task(tenant_id, r) for r in rows]

    def _task(self, tenant_id: str, row: Any) -> dict[str, Any]:
        members = self.conn.execute(
            "SELECT agent_id FROM agent_task_members WHERE tenant_id = ? AND task_id = ? "
            "ORDER BY joined_at, agent_id",
            (tenant_id, row[0]),
        ).fetchall()
        return {
            "id": row[0],
            "title": row[1],
            "created_at": from_us(row[2]),
            "members": [m[0] for m in members],
        }

    def join_agent_task(self, tenant_id: str, task_id: str, agent_id: str) -> None:
        """Make the agent a member (a member already stays one, with its first join time)."""
        with self.write() as conn:
            conn.execute(
                "INSERT INTO agent_task_members(tenant_id, task_id, agent_id, joined_at) "
                "VALUES (?, ?, ?, ?) ON CONFLICT(tenant_id, task_id, agent_id) DO NOTHING",
                (tenant_id, task_id, agent_id, to_us(utcnow())),
            )

    def leave_agent_task(self, tenant_id: str, task_id: str, agent_id: str) -> bool:
        """End the agent's membership; False when it was not a member."""
        with self.write() as conn:
            cursor = conn.execute(
                "DELETE FROM agent_task_members WHERE tenant_id = ? AND task_id = ? "
                "AND agent_id = ?",
                (tenant_id, task_id, agent_id),
            )
        return cursor.rowcount == 1

    def delete_agent_task(self, tenant_id: str, task_id: str) -> bool:
        """The task and every membership in it; False when the tenant has no such task."""
        with self.write() as conn:
            conn.execute(
                "DELETE FROM agent_task_members WHERE tenant_id = ? AND task_id = ?",
                (tenant_id, task_id),
            )
            cursor = conn.execute(
                "DELETE FROM agent_tasks WHERE tenant_id = ? AND id = ?", (tenant_id, task_id)
            )
        return cursor.rowcount == 1

    def is_task_member(self, tenant_id: str, task_id: str, agent_id: str) -> bool:
        row = self.conn.execute(
            "SELECT 1 FROM agent_task_members WHERE tenant_id = ? AND task_id = ? AND agent_id = ?",
            (tenant_id, task_id, agent_id),
        ).fetchone()
        return row is not None
