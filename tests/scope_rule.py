"""The scope rule of docs/continuity.md written out, over three agents and two tasks.

Shared by the visibility tests of every door (tests/continuity/test_scopes.py)
and of both backends (tests/service/test_service_scopes.py).
"""

from __future__ import annotations

# the tasks and their members; each agent's current session
TASKS = {"t1": ("a", "b"), "t2": ("b", "c")}
SESSIONS = {"a": "s1", "b": "s2", "c": "s3"}
READERS = list(SESSIONS)


def allowed(reader: str, scope: str) -> bool:
    """Global, the reader's tasks, its agent scope and its current session; nothing else."""
    kind, _, rest = scope.partition("/")
    if kind == "global":
        return True
    if kind == "task":
        return reader in TASKS[rest]
    if kind == "agent":
        return rest == reader
    return rest == f"{reader}/{SESSIONS[reader]}"
