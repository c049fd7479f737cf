"""MCP tools of session continuity beyond checkpoints: collaboration tasks and the
sessions' summary layers.

Memories scoped ``task/{id}`` are seen by the agents that take part in the
task (docs/continuity.md). The MCP server acts as one agent when started
with ``--agent-id`` (``MEMORYD_AGENT_ID``): the task tools then join and
leave for that agent, and the layers are that agent's sessions'.
"""

from __future__ import annotations

from memoryd.mcp.backend import Json
from memoryd.mcp.render import titled
from memoryd.mcp.spec import ToolSpec, object_schema, string


def _members(task: Json) -> str:
    members = ", ".join(task.get("members") or []) or "none"
    return f"Task {task.get('id')} ({task.get('title') or 'untitled'}): members {members}"


CONTINUITY_TOOLS: list[ToolSpec] = [
    ToolSpec(
        name="session_layers",
        title="Session Layers",
        description=(
            "Read the condensed memory of earlier sessions: per session its themes (D0), gist "
            "(D1), outline (D2) and exchange summary (D5, kept a week). Use it when the user "
            "asks what was done in a past session and search found its gist: the outline has "
            "the steps. Filter by agent_id and session_id."
        ),
        input_schema=object_schema(
            {"agent_id": string("Only this agent's"), "session_id": string("Only this session")}
        ),
        run=lambda b, a: b.session_layers(a.get("agent_id"), a.get("session_id")),
        render=titled("Session layers"),
        read_only=True,
    ),
    ToolSpec(
        name="task_list",
        title="List Tasks",
        description=(
            "List the collaboration tasks of this memory store and the agents taking part. "
            "Use it to find the task to join before working with other agents on it; with "
            "agent_id, only the tasks that agent takes part in."
        ),
        input_schema=object_schema({"agent_id": string("Only the tasks of this agent")}),
        run=lambda b, a: b.task_list(a.get("agent_id")),
        render=titled("Tasks"),
        read_only=True,
    ),
    ToolSpec(
        name="task_create",
        title="Create Task",
        description=(
            "Create a collaboration task (an id of your choosing, e.g. 'billing-bug'); as an "
            "agent you take part in it at once. Use it when several agents start on one piece "
            "of work: memories stored with scope 'task/<id>' are shared by every agent in the "
            "task and by no other."
        ),
        input_schema=object_schema(
            {"id": string("The task id (letters, digits, . _ : @ + -)"), "title": string("Title")}
        ),
        run=lambda b, a: b.task_create(a.get("id"), a.get("title") or ""),
        render=_members,
    ),
    ToolSpec(
        name="task_join",
        title="Join Task",
        description=(
            "Take part in a collaboration task. Use it when you are asked to help with a task "
            "other agents work on: from now on you see the memories scoped 'task/<id>' and may "
            "store into that scope."
        ),
        input_schema=object_schema(
            {"task_id": string("The task"), "agent_id": string("The agent (default: you)")},
            ["task_id"],
        ),
        run=lambda b, a: b.task_join(a["task_id"], a.get("agent_id")),
        render=_members,
    ),
    ToolSpec(
        name="task_leave",
        title="Leave Task",
        description=(
            "Stop taking part in a collaboration task. Use it when your part in the task is "
            "done: its memories are no longer seen by you."
        ),
        input_schema=object_schema(
            {"task_id": string("The task"), "agent_id": string("The agent (default: you)")},
            ["task_id"],
        ),
        run=lambda b, a: b.task_leave(a["task_id"], a.get("agent_id")),
        render=_members,
        destructive=True,
    ),
]
