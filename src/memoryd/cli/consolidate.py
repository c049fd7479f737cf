"""``memoryd consolidate``: merge duplicates and retire superseded facts, with history."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from memoryd.cli.app import DATA, app, console, emit, service
from memoryd.terms import wire

WAIT_S = 3600.0


@app.command(rich_help_panel=DATA)
def consolidate(
    wait: Annotated[
        bool, typer.Option("--wait/--no-wait", help="Wait for the result (default) or queue it.")
    ] = True,
) -> None:
    """Consolidate memories: duplicates merged, changed facts superseded, nothing deleted.

    Every retired memory keeps its history (``memoryd history ID``) and is
    found by ``search --as-of`` a time before. An interrupted run resumes on
    the next start of memoryd; ``memoryd serve`` also runs it on a schedule
    (``consolidate_interval_h``, 24 by default).
    """
    with service() as svc:
        task = svc.consolidate()
        if wait:
            task = svc.wait_for_task(task["id"], WAIT_S)
    found = wire(task)
    emit(found, lambda: console.print(_line(found)))


def _line(task: dict[str, Any]) -> str:
    if task["status"] not in ("completed", "failed"):
        return f"consolidation {task['id']} {task['status']}; see `memoryd task {task['id']}`"
    decisions = ", ".join(f"{k} {v}" for k, v in (task.get("decisions") or {}).items())
    line = (
        f"consolidation {task['status']}: {task.get('memories_checked', 0)} memories checked, "
        f"{task.get('retired', 0)} retired with history"
    )
    if decisions:
        line += f" ({decisions})"
    if task.get("errors"):
        line += "; errors: " + "; ".join(task["errors"])
    return line
