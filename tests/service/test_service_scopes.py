"""Scopes on each backend: the rule of memoryd.store.scopes is in the SQL of both.

The full matrix over every door is tests/continuity/test_scopes.py (SQLite);
this runs the same rule through the service on SQLite and PostgreSQL: every
agent finds exactly global, the tasks it takes part in, its agent scope and
its current session, on search, list, get, export and stats.
"""

from __future__ import annotations

import pytest
from scope_rule import SESSIONS, TASKS, allowed

from memoryd.errors import ForbiddenError, NotFoundError
from memoryd.portability import export_lines
from memoryd.service import MemoryService

WRITERS = {
    "global": ("a", "s1"),
    "task/t1": ("a", "s1"),
    "task/t2": ("c", "s3"),
    "agent/a": ("a", "s1"),
    "agent/b": ("b", "s2"),
    "session/c/s3": ("c", "s3"),
    "session/a/s0": ("a", "s0"),  # an earlier session of a: not its current one
}


@pytest.mark.parametrize("reader", list(SESSIONS))
def test_each_agent_sees_exactly_its_scopes(service: MemoryService, reader: str) -> None:
    for task, (creator, *others) in TASKS.items():
        service.for_agent(creator).tasks.create(task)
        for agent in others:
            service.tasks.join(task, agent)
    ids = {
        scope: service.for_agent(*who).add(f"quince audit note in {scope}", scope=scope).id
        for scope, who in WRITERS.items()
    }
    view = service.for_agent(reader, SESSIONS[reader])
    expected = {ids[s] for s in WRITERS if allowed(reader, s)}
    found = view.search("quince audit note", limit=50).results
    assert {r.memory.id for r in found} == expected
    assert {m.id for m in view.list_memories(limit=100)[0]} == expected
    figures = view.stats()  # the stats count what the agent may see, no more
    assert figures["total"] == sum(figures["by_agent"].values()) == len(expected)
    for scope, memory_id in ids.items():
        if allowed(reader, scope):
            assert view.get(memory_id).id == memory_id
        else:
            with pytest.raises(NotFoundError):
                view.get(memory_id)
    exported = [x["memory"]["id"] for x in export_lines(view) if x["type"] == "memory"]
    assert set(exported) == expected
    with pytest.raises(ForbiddenError):
        view.add("must not land", scope="agent/zed")


def test_a_deleted_task_ends_every_part_in_it(service: MemoryService) -> None:
    """The owner deletes a task: no agent is in it any more, nobody can write into it, and
    its memories stay the owner's, seen by no agent."""
    service.for_agent("a").tasks.create("t9", "quince launch")
    service.tasks.join("t9", "b")
    note = service.for_agent("a").add("rollout plan for the quince launch", scope="task/t9")
    with pytest.raises(ForbiddenError, match="owner's to delete"):
        service.for_agent("a").tasks.delete("t9")
    gone = service.tasks.delete("t9")
    assert gone["id"] == "t9" and sorted(gone["members"]) == ["a", "b"]
    assert service.tasks.list() == []
    for missing in (service.tasks.get, service.tasks.delete):
        with pytest.raises(NotFoundError):
            missing("t9")
    assert service.get(note.id).id == note.id
    for agent in ("a", "b"):
        view = service.for_agent(agent)
        with pytest.raises(NotFoundError):
            view.get(note.id)
        with pytest.raises(NotFoundError):
            view.add("into a task that is gone", scope="task/t9")
