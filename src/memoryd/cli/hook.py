"""``memoryd hook …`` (Claude Code's hooks) and ``memoryd profile``.

The hook commands are what the plugin's ``hooks.json`` runs: each reads the
hook's JSON on stdin, prints Claude Code's hook JSON (or nothing) and exits
0 whatever happens; ``memoryd.hooks`` says why. ``memoryd profile`` shows
the profile the SessionStart hook injects, for a person to check it.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

from memoryd.cli.app import MEMORIES, SERVER, app, console, emit, service, state

hook_app = typer.Typer(
    name="hook",
    help="Claude Code hooks: hook JSON on stdin, hook JSON on stdout, always exit 0.",
    no_args_is_help=True,
)
app.add_typer(hook_app, name="hook", rich_help_panel=SERVER)


def _run(command: str) -> None:
    from memoryd.hooks.runner import run_hook

    raise typer.Exit(run_hook(command, home=state.home))


@hook_app.command("session-start")
def session_start() -> None:
    """SessionStart (also after a compaction): inject the profile and recent memories."""
    _run("session-start")


@hook_app.command("user-prompt")
def user_prompt() -> None:
    """UserPromptSubmit: inject memories relevant to the prompt; keep "remember this"."""
    _run("user-prompt")


@hook_app.command("stop")
def stop() -> None:
    """Stop: send the last turns of the transcript to smart ingest."""
    _run("stop")


@hook_app.command("pre-compact")
def pre_compact() -> None:
    """PreCompact: send the last turns to smart ingest before the compaction."""
    _run("pre-compact")


@hook_app.command("post-tool-use")
def post_tool_use() -> None:
    """PostToolUse: save the session's checkpoint after a tool that writes a file."""
    _run("post-tool-use")


@hook_app.command("session-end")
def session_end() -> None:
    """SessionEnd: save the session's last checkpoint (with a summary when an LLM is set),
    in a background process: the hook only writes it down."""
    _run("session-end")


@hook_app.command("handed-off", hidden=True)
def handed_off_() -> None:
    """Do the hooks written down for a background process (started by the hooks, detached)."""
    from memoryd.hooks.runner import run_handed_off

    raise typer.Exit(run_handed_off(home=state.home))


@hook_app.command("summarize", hidden=True)
def summarize_(
    checkpoint: Annotated[str, typer.Option(help="The checkpoint to summarise.")],
) -> None:
    """Ask the configured LLM for a checkpoint's summary (started by a hook, detached)."""
    from memoryd.hooks.runner import summarize_checkpoint

    raise typer.Exit(summarize_checkpoint(checkpoint, home=state.home))


@hook_app.command("consolidate", hidden=True)
def consolidate_(
    agent: Annotated[str, typer.Option(help="The agent of the session.")],
    session: Annotated[str, typer.Option(help="The session that ended.")],
) -> None:
    """Condense an ended session's layers (started by the SessionEnd hook, detached)."""
    from memoryd.hooks.runner import consolidate_session

    raise typer.Exit(consolidate_session(agent, session, home=state.home))


@hook_app.command("drain", hidden=True)
def drain_(
    task: Annotated[str, typer.Option(help="The ingest task to finish.")],
    after_pid: Annotated[int | None, typer.Option(help="Wait for this process to exit.")] = None,
) -> None:
    """Finish a smart-ingest task a capture hook left running (started by the hook itself)."""
    from memoryd.hooks.runner import drain

    raise typer.Exit(drain(task, after_pid, home=state.home))


@hook_app.command("resident", hidden=True)
def resident_(
    idle: Annotated[
        float, typer.Option(min=0.01, max=24 * 60, help="Exit after this many idle minutes.")
    ] = 30.0,
    stop: Annotated[bool, typer.Option("--stop", help="Stop the running one instead.")] = False,
) -> None:
    """Keep this home warm for the prompt hooks (started by a hook, detached)."""
    from memoryd.home import default_home
    from memoryd.hooks import resident
    from memoryd.hooks.resident_serve import serve

    if stop:
        stopped = resident.stop(state.home or default_home())
        emit({"stopped": stopped}, lambda: console.print("stopped" if stopped else "not running"))
        return
    raise typer.Exit(serve(state.home, idle))


@app.command(rich_help_panel=MEMORIES)
def profile(
    query: Annotated[
        str | None, typer.Option("--query", "-q", help="Also search the memories for this.")
    ] = None,
) -> None:
    """The synthesized user profile: stable facts and what is going on lately."""
    from memoryd.profile import build_profile

    with service() as svc:
        data = build_profile(svc, query)

    def human() -> None:
        shown = False
        for title, field in (("About the user", "static_facts"), ("Recently", "dynamic_context")):
            facts: list[str] = data[field]
            if facts:
                shown = True
                console.print(f"[bold]{title}[/bold]")
                for fact in facts:
                    console.print(f"  - {fact}", markup=False, highlight=False)
        results: list[dict[str, Any]] | None = data["search_results"]
        if results:
            shown = True
            table = Table(header_style="bold")
            for column in ("score", "id", "content", "category"):
                table.add_column(column, no_wrap=column in ("score", "id"))
            for r in results:
                m = r["memory"]
                table.add_row(f"{r['score']:.3f}", m["id"][:8], Text(m["content"]), m["category"])
            console.print(table)
        elif query:
            console.print("[yellow]no memories matched the query[/yellow]")
        if not shown and not query:
            console.print(
                "[yellow]no profile yet[/yellow]: it grows from profile and preference "
                "memories, and from events of the last days"
            )

    emit(data, human)
