"""``memoryd task``: collaboration tasks of agents (create, list, members, join, leave).

``memoryd task ID`` stays what it was, the status of a conversation-ingest
task: a first argument that names no subcommand is such an id.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.table import Table
from typer.core import TyperGroup

from memoryd.cli import data
from memoryd.cli.app import DATA, app, console, emit, service
from memoryd.terms import wire


class TaskGroup(TyperGroup):
    """Subcommands, and an ingest task's id where a subcommand would be."""

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:  # typer's own click types
        if args and not args[0].startswith("-") and args[0] not in self.commands:
            args = ["status", *args]
        return super().resolve_command(ctx, args)


task_app = typer.Typer(
    name="task",
    cls=TaskGroup,
    help=(
        "Collaboration tasks of agents (memories scoped task/ID); "
        "ID alone: an ingest task's status."
    ),
    no_args_is_help=True,
)
app.add_typer(task_app, name="task", rich_help_panel=DATA)
task_app.command("status")(data.task)


def _show(task: dict[str, Any]) -> None:
    members = ", ".join(task["members"]) or "no members"
    title = f" ({task['title']})" if task["title"] else ""
    console.print(f"task [bold]{task['id']}[/bold]{title}: {members}")


@task_app.command("create")
def create(
    task_id: Annotated[str, typer.Argument(metavar="ID", help="The task id, e.g. billing-bug.")],
    title: Annotated[str, typer.Option("--title", help="What the task is.")] = "",
) -> None:
    """Make a task (an existing one is left as it is)."""
    with service() as svc:
        task, _ = svc.tasks.create(task_id, title)
    emit(wire(task), lambda: _show(task))


@task_app.command("list")
def list_(
    agent: Annotated[str | None, typer.Option("--agent", help="Only this agent's tasks.")] = None,
) -> None:
    """Every task and its members."""
    with service() as svc:
        found = svc.tasks.list(agent)

    def human() -> None:
        if not found:
            console.print("[yellow]no tasks[/yellow]")
            return
        table = Table(header_style="bold")
        for column in ("id", "title", "members"):
            table.add_column(column)
        for t in found:
            table.add_row(t["id"], t["title"], ", ".join(t["members"]))
        console.print(table)

    emit({"tasks": wire(found)}, human)


@task_app.command("members")
def members(task_id: Annotated[str, typer.Argument(metavar="ID")]) -> None:
    """The agents taking part in a task."""
    with service() as svc:
        task = svc.tasks.get(task_id)
    emit(wire(task), lambda: _show(task))


@task_app.command("join")
def join(
    task_id: Annotated[str, typer.Argument(metavar="ID")],
    agent: Annotated[str, typer.Argument(metavar="AGENT", help="The agent that takes part.")],
) -> None:
    """Let an agent take part: it sees the task's memories from now on."""
    with service() as svc:
        task = svc.tasks.join(task_id, agent)
    emit(wire(task), lambda: _show(task))


@task_app.command("leave")
def leave(
    task_id: Annotated[str, typer.Argument(metavar="ID")],
    agent: Annotated[str, typer.Argument(metavar="AGENT")],
) -> None:
    """End an agent's part in a task: it no longer sees the task's memories."""
    with service() as svc:
        task = svc.tasks.leave(task_id, agent)
    emit(wire(task), lambda: _show(task))


@task_app.command("delete")
def delete(task_id: Annotated[str, typer.Argument(metavar="ID")]) -> None:
    """Delete a collaboration task and every agent's part in it (its memories stay yours)."""
    with service() as svc:
        task = svc.tasks.delete(task_id)
    emit(wire(task), lambda: _show(task))
