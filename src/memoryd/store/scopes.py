"""Scopes: which agents of one owner see a memory (seed 004's scope hierarchy).

A memory's ``scope`` is one of::

    global                     every agent (the default, as the ourmem contract has it)
    task/{task_id}             the agents that take part in the task
    agent/{agent_id}           that agent alone
    session/{agent_id}/{sid}   that agent, in that session alone

The seed writes them with a leading slash (``/task/billing``); both
spellings are accepted and the stored one has none, so ``global`` stays
the wire default. A viewer (an agent, with its current session) sees
``global``, the tasks it is a member of, its own agent scope and its
current session, and nothing else. The rule is SQL in ``visible_sql``,
which ``filters.where_clause`` adds to every query a viewer makes: no
door can forget it. Without a viewer (the owner: the CLI, the dashboard,
a request without ``X-Agent-Id``) every scope is seen, as before.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from memoryd.errors import ValidationError

GLOBAL = "global"
TASK, AGENT, SESSION = "task", "agent", "session"
# an id inside a scope: no slash (it separates the parts), no spaces, not empty
_PART = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:@+-]{0,127}")
SCOPE_SHAPES = "global, task/{task_id}, agent/{agent_id} or session/{agent_id}/{session_id}"


def check_part(kind: str, value: Any) -> str:
    """An agent, session or task id that can stand inside a scope; ValidationError otherwise."""
    if not isinstance(value, str) or not _PART.fullmatch(value):
        raise ValidationError(
            f"{kind} must be 1-128 letters, digits or . _ : @ + - (starting with a letter or "
            f"digit), got {value!r}"
        )
    return value


def is_part(value: object) -> bool:
    """Whether ``value`` can stand inside a scope as an agent, session or task id."""
    return isinstance(value, str) and _PART.fullmatch(value) is not None


@dataclass(frozen=True)
class Scope:
    """A parsed scope; ``str()`` is its stored form."""

    kind: str
    task_id: str | None = None
    agent_id: str | None = None
    session_id: str | None = None

    def __str__(self) -> str:
        if self.kind == TASK:
            return f"task/{self.task_id}"
        if self.kind == AGENT:
            return f"agent/{self.agent_id}"
        if self.kind == SESSION:
            return f"session/{self.agent_id}/{self.session_id}"
        return GLOBAL


def parse_scope(value: Any) -> Scope:
    """A scope from either spelling (``/agent/a`` or ``agent/a``); ValidationError otherwise."""
    if not isinstance(value, str):
        raise ValidationError(f"scope must be a string ({SCOPE_SHAPES}), got {value!r}")
    parts = value.strip().removeprefix("/").split("/")
    try:
        if parts == [GLOBAL]:
            return Scope(GLOBAL)
        if parts[0] == TASK and len(parts) == 2:
            return Scope(TASK, task_id=check_part("task id", parts[1]))
        if parts[0] == AGENT and len(parts) == 2:
            return Scope(AGENT, agent_id=check_part("agent id", parts[1]))
        if parts[0] == SESSION and len(parts) == 3:
            agent = check_part("agent id", parts[1])
            return Scope(SESSION, agent_id=agent, session_id=check_part("session id", parts[2]))
    except ValidationError as exc:
        raise ValidationError(f"scope {value!r}: {exc.message}") from None
    raise ValidationError(f"unknown scope {value!r}: a scope is {SCOPE_SHAPES}")


def normalize_scope(value: str | None) -> str | None:
    """The stored form of a scope a read filters by (``None`` stays "any").

    A read is an exact match and never an error: a string that is no scope
    (an ourmem plugin's own label) matches the memories stored with it.
    """
    if value is None or not value.strip():
        return None
    try:
        return str(parse_scope(value))
    except ValidationError:
        return value


def agent_scope(agent_id: str) -> str:
    """``agent/{agent_id}``; ``global`` for an id that cannot stand in a scope (a slash or a
    space in it): what only that agent should see needs an id that can name it."""
    try:
        return str(Scope(AGENT, agent_id=check_part("agent id", agent_id)))
    except ValidationError:
        return GLOBAL


@dataclass(frozen=True)
class Viewer:
    """An agent of the tenant, in its current session (``None``: between sessions)."""

    agent_id: str
    session_id: str | None = None

    @classmethod
    def of(cls, agent_id: Any, session_id: Any = None) -> Viewer:
        agent = check_part("agent id", agent_id)
        session = None if session_id in (None, "") else check_part("session id", session_id)
        return cls(agent, session)

    def own_scopes(self) -> list[str]:
        """The scopes it sees without any task: global, its agent scope, its session."""
        own = [GLOBAL, str(Scope(AGENT, agent_id=self.agent_id))]
        if self.session_id is not None:
            own.append(str(Scope(SESSION, agent_id=self.agent_id, session_id=self.session_id)))
        return own


def visible_sql(tenant_id: str, viewer: Viewer) -> tuple[str, list[Any]]:
    """The condition "this viewer may see ``m``", over alias ``m``, and its parameters.

    A memory another tenant wrote (a copy in a shared space) is seen only
    when it is global: scopes are one owner's agents, and another owner's
    agent or task names mean nothing here. Plain SQL (``IN``, a subquery,
    ``||``), as every backend has it.
    """
    own = viewer.own_scopes()
    marks = ", ".join("?" for _ in own)
    sql = (
        "(m.scope = 'global' OR (m.tenant_id = ? AND ("
        f"m.scope IN ({marks}) OR m.scope IN (SELECT 'task/' || atm.task_id "
        "FROM agent_task_members atm WHERE atm.tenant_id = ? AND atm.agent_id = ?))))"
    )
    return sql, [tenant_id, *own, tenant_id, viewer.agent_id]
