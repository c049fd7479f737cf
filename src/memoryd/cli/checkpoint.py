"""``memoryd checkpoint list|show``: the sessions' checkpoints, as a new session gets them."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from memoryd.cli.app import MEMORIES, app, console, emit, service

checkpoint_app = typer.Typer(
    name="checkpoint",
    help="Session checkpoints: where each agent session left off.",
    no_args_is_help=True,
)
app.add_typer(checkpoint_app, name="checkpoint", rich_help_panel=MEMORIES)


@checkpoint_app.command("list")
def list_(
    agent: Annotated[str | None, typer.Option("--agent", help="Only this agent's.")] = None,
    session: Annotated[str | None, typer.Option("--session", help="Only this session's.")] = None,
    project: Annotated[
        str | None, typer.Option("--project", help="Only this project's (a working directory).")
    ] = None,
    limit: Annotated[int, typer.Option("--limit", "-n", help="At most this many.")] = 20,
) -> None:
    """The newest checkpoints first."""
    from memoryd.continuity import Continuity
    from memoryd.continuity.service import dump
    from memoryd.inject import relative_age

    with service() as svc:
        found = Continuity(svc, llm=None).list(
            agent_id=agent, session_id=session, project=project, limit=limit
        )

    def human() -> None:
        if not found:
            console.print("[yellow]no checkpoints[/yellow]")
            return
        table = Table(header_style="bold")
        for column in ("id", "agent", "session", "project", "trigger", "saved", "files"):
            table.add_column(column, no_wrap=column in ("id", "saved"))
        for c in found:
            table.add_row(
                c.id[:8],
                c.agent_id,
                c.session_id,
                c.project,
                c.trigger.value,
                relative_age(c.updated_at),
                str(len(c.mechanical.modified_files)),
            )
        console.print(table)

    emit({"checkpoints": [dump(c) for c in found]}, human)


@checkpoint_app.command("show")
def show(
    checkpoint_id: Annotated[
        str | None, typer.Argument(help="A checkpoint id (default: the newest of --agent).")
    ] = None,
    agent: Annotated[str | None, typer.Option("--agent", help="The agent's newest.")] = None,
    project: Annotated[str | None, typer.Option("--project", help="In this project.")] = None,
) -> None:
    """One checkpoint, rendered as a new session receives it (``--json``: every field)."""
    from memoryd.continuity import Continuity
    from memoryd.continuity.service import dump

    with service() as svc:
        continuity = Continuity(svc, llm=None)
        if checkpoint_id:
            checkpoint = continuity.get(checkpoint_id)
        else:
            found = continuity.list(agent_id=agent, project=project, limit=1)
            if not found:
                console.print("[yellow]no checkpoints[/yellow]")
                raise typer.Exit(1)
            checkpoint = found[0]
        text = continuity.render(checkpoint)
    emit(
        {**dump(checkpoint), "rendered": text},
        lambda: console.print(text, markup=False, highlight=False),
    )


@checkpoint_app.command("consolidate")
def consolidate_sessions() -> None:
    """Condense every session into outline, gist and themes; remove expired layers."""
    from memoryd.continuity.layers import SessionLayers

    with service() as svc:
        layers = SessionLayers(svc)
        done = {"consolidated": layers.consolidate_pending(), "expired": layers.retain()}
    emit(
        done,
        lambda: console.print(
            f"{done['consolidated']} session(s) consolidated, "
            f"{done['expired']} expired layer row(s) removed"
        ),
    )
