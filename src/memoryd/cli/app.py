"""``memoryd``: the command line door. Human output by default, ``--json`` for scripts.

This module holds what every command shares: the global options, the service
a command works on, the rendering helpers and the entry point, which turns
every failure a user can cause (a bad option value included) into the same
error shape: a message on stderr, or ``{"error": {"code", "message"}}`` with
``--json``.
"""

from __future__ import annotations

import copy
import json
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer
from rich.console import Console
from rich.markup import escape
from typer.models import CommandInfo

from memoryd.errors import MemorydError, ValidationError
from memoryd.users import user_tenant

if TYPE_CHECKING:
    # loaded by the commands that use them: every command starts in a fraction of a second
    # (``python -m bench startup`` measures it), so no module here imports the model,
    # NumPy, the retrieval stages or an HTTP client at import time
    from rich.progress import Progress
    from rich.table import Table

    from memoryd.models import Memory as MemoryRecord
    from memoryd.service import MemoryService

app = typer.Typer(
    name="memoryd",
    help="Long-term memory for AI agents: add, search and manage memories offline.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
console = Console()
err = Console(stderr=True)
T = TypeVar("T")
# the panels of ``memoryd --help``
MEMORIES = "Memories"
DATA = "Conversations, files and exports"
SERVER = "Server, keys and agent hosts"
# exit status of a command stopped by Ctrl-C (128 + SIGINT), as shells report it
INTERRUPTED = 130
# the global options that take a value (``--home DIR``): the command follows them
VALUED_GLOBALS = ("--home", "--user", "--database")


class State:
    home: Path | None = None
    as_json: bool = False
    user: str | None = None


state = State()


def _print_version(asked: bool) -> None:
    if asked:
        from importlib.metadata import version

        console.print(f"memoryd {version('memoryd')}", markup=False, highlight=False)
        raise typer.Exit()


@app.callback()
def main(
    home: Annotated[
        Path | None,
        typer.Option(
            "--home",
            envvar="MEMORYD_HOME",
            metavar="DIR",
            help="Data directory (default: $XDG_DATA_HOME/memoryd or ~/.local/share/memoryd).",
        ),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Machine-readable output (errors too).")
    ] = False,
    user: Annotated[
        str | None,
        typer.Option(
            "--user",
            envvar="MEMORYD_USER",
            metavar="ID",
            help="Act as this user: their own memories on this home (default: the local user).",
        ),
    ] = None,
    database: Annotated[
        str | None,
        typer.Option(
            "--database",
            envvar="MEMORYD_DATABASE_URL",
            metavar="URL",
            help="A PostgreSQL database (postgresql://…) instead of SQLite in the home.",
        ),
    ] = None,
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            is_eager=True,
            callback=_print_version,
            help="Print memoryd's version and exit.",
        ),
    ] = False,
) -> None:
    if database:  # every part of this process (and the servers it starts) reads it there
        os.environ["MEMORYD_DATABASE_URL"] = database
    state.home = home
    state.as_json = as_json
    state.user = user


def fail(exc: MemorydError) -> typer.Exit:
    """Print a memoryd error as the command's output says errors; the exit to raise."""
    if state.as_json:
        print(json.dumps({"error": {"code": exc.code, "message": exc.message}}))
    else:
        err.print(f"[red]error:[/red] {escape(exc.message)}")
    return typer.Exit(1)


@contextmanager
def reported() -> Iterator[None]:
    """Memoryd errors become a message (or the JSON error object) and exit code 1."""
    try:
        yield
    except MemorydError as exc:
        raise fail(exc) from None


@contextmanager
def service() -> Iterator[MemoryService]:
    """A service for one command, its errors reported."""
    from memoryd.service import MemoryService

    svc: MemoryService | None = None
    with reported():
        try:
            svc = MemoryService(state.home, tenant_id=user_tenant(state.user))
            yield svc
        finally:
            if svc is not None:
                svc.close()


def emit(data: Any, human: Callable[[], None]) -> None:
    if state.as_json:
        print(json.dumps(data, ensure_ascii=False))
    else:
        human()


def iso_time(value: str) -> datetime:
    """An option value that is a moment: ISO 8601, a date alone meaning its midnight UTC."""
    from memoryd.validate import check_time

    try:
        moment = check_time("value", value)
    except ValidationError:
        raise typer.BadParameter(
            f"{value!r} is not an ISO 8601 date or time (e.g. 2026-01-31 or 2026-01-31T09:30Z)"
        ) from None
    assert moment is not None
    return moment


def read_text(value: str, what: str = "content") -> str:
    """``-`` reads the text from stdin (for long text, or text piped in); else the value."""
    from memoryd.validate import MAX_CONTENT_CHARS

    if value != "-":
        return value
    if sys.stdin.isatty():
        err.print(f"reading the {what} from stdin (end with Ctrl-D)…")
    text = sys.stdin.read(MAX_CONTENT_CHARS + 2)
    return text[:-1] if text.endswith("\n") else text


# a table row shows this much of a memory (its first line): `get` shows it whole
ROW_CHARS = 160
# below this many columns a row's time is its date: the content gets the room
NARROW = 100


def _when(value: datetime | None, narrow: bool = False) -> str:
    if value is None:
        return ""
    return f"{value:%Y-%m-%d}" if narrow else f"{value:%Y-%m-%d %H:%M}"


def _row_text(content: str) -> str:
    """A memory as one table row holds it: its first line, cut on a word."""
    first, _, rest = content.strip().partition("\n")
    text = " ".join(first.split())
    if len(text) > ROW_CHARS:
        text = text[:ROW_CHARS].rsplit(" ", 1)[0] + " …"
    elif rest.strip():
        text += " …"
    return text


def memory_table(
    memories: list[MemoryRecord],
    scores: list[float] | None = None,
    similarities: list[float | None] | None = None,
) -> Table:
    from rich import box
    from rich.table import Table

    from memoryd.ids import short
    from memoryd.models import Status

    # a narrow terminal: no vertical rules and short headers leave the content its room
    narrow = console.width < NARROW
    table = Table(
        show_lines=False,
        header_style="bold underline" if narrow else "bold",
        box=None if narrow else box.HEAVY_HEAD,
        collapse_padding=narrow,
        pad_edge=not narrow,
    )
    if scores is not None:
        table.add_column("score", justify="right", no_wrap=True)
    if similarities is not None:
        table.add_column("sim" if narrow else "similarity", justify="right", no_wrap=True)
    table.add_column("id", style="dim", no_wrap=True)
    table.add_column("content", ratio=1, min_width=24)
    table.add_column("category", no_wrap=not narrow)
    table.add_column("type", no_wrap=not narrow)
    table.add_column("when", no_wrap=True)
    for i, m in enumerate(memories):
        kind = m.memory_type.value
        if m.status is not Status.CURRENT:  # replaced, ended, archived: never shown as holding
            kind += f", {m.status.value}"
        row = [short(m.id), escape(_row_text(m.content)), m.category.value, kind]
        row.append(_when(m.said_at, narrow))
        if similarities is not None:
            sim = similarities[i]
            row.insert(0, "" if sim is None else f"{sim:.3f}")
        if scores is not None:
            row.insert(0, f"{scores[i]:.3f}")
        table.add_row(*row)
    return table


def show_fields(data: dict[str, Any]) -> None:
    from rich.table import Table

    table = Table.grid(padding=(0, 2))
    for key, value in data.items():
        text = json.dumps(value, ensure_ascii=False) if isinstance(value, list | dict) else value
        table.add_row(f"[bold]{key}[/bold]", escape(str(text)))
    console.print(table)


def progress_bar() -> Progress:
    """The bar of a long command: done of total, time spent, and the time left at the
    pace so far (an import of a large file runs for minutes)."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("left"),
        TimeRemainingColumn(),
        console=err,
        disable=state.as_json,
    )


# ---------------------------------------------------------------------- entry point
def _quiet_flags(command: Any) -> None:
    """Flags take no value: show none in help (Typer would print ``<bool>`` beside them)."""
    help_option = command.get_help_option(typer.Context(command))
    for param in [*getattr(command, "params", []), help_option]:
        if getattr(param, "is_flag", False) and param.metavar is None:
            param.metavar = ""
    for sub in getattr(command, "commands", {}).values():
        _quiet_flags(sub)


def global_first(args: list[str]) -> list[str]:
    """``--json`` moved before the command where it was typed after it.

    ``memoryd search QUERY --json`` is how people type it; Typer reads
    global options only before the command. Anything after ``--`` is left
    alone (it is an argument, whatever it looks like).
    """
    end = args.index("--") if "--" in args else len(args)
    if "--json" not in args[:end]:
        return args
    return ["--json", *(a for a in args[:end] if a != "--json"), *args[end:]]


def _wants_json(args: list[str]) -> bool:
    """``--json`` among the global options (before the command), parsed or not."""
    for arg in args:
        if arg == "--json":
            return True
        if not arg.startswith("-"):
            return False
    return False


def invoked(args: list[str]) -> str | None:
    """The command ``args`` name: the first word that is not a global option or its value."""
    at = 0
    while at < len(args):
        arg = args[at]
        if arg == "--":
            return None
        if arg in VALUED_GLOBALS:
            at += 2
        elif arg.startswith("-"):
            at += 1
        else:
            return arg
    return None


def only(name: str | None) -> typer.Typer:
    """The app with just the command (or group of commands) ``name``, when it has one.

    Typer reads the signature of every command to build its tree: 58
    commands cost more than opening the database. A command run builds its
    own; ``--help``, no command or an unknown one get the whole tree (click
    then lists or suggests the commands).
    """
    commands = [c for c in app.registered_commands if _command_name(c) == name]
    groups = [
        g for g in app.registered_groups if typer.main.solve_typer_info_defaults(g).name == name
    ]
    if not commands and not groups:
        return app
    pruned = copy.copy(app)
    pruned.registered_commands = commands
    pruned.registered_groups = groups
    return pruned


def _command_name(info: CommandInfo) -> str | None:
    if info.name:
        return info.name
    return None if info.callback is None else typer.main.get_command_name(info.callback.__name__)


def run(args: list[str] | None = None) -> None:
    """The ``memoryd`` console script."""
    args = global_first(sys.argv[1:] if args is None else args)
    command = typer.main.get_command(only(invoked(args)))
    _quiet_flags(command)
    try:
        if not _wants_json(args):
            command.main(args, prog_name="memoryd", standalone_mode=True)
            return
        code = command.main(args, prog_name="memoryd", standalone_mode=False)
    except KeyboardInterrupt:
        err.print("interrupted")
        sys.exit(INTERRUPTED)
    except typer.Abort:
        raise SystemExit(fail(ValidationError("aborted")).exit_code) from None
    except typer.TyperException as exc:  # a usage error: a bad option value, a missing argument
        message = exc.format_message() if hasattr(exc, "format_message") else str(exc)
        print(json.dumps({"error": {"code": "validation_error", "message": message}}))
        sys.exit(getattr(exc, "exit_code", 2))
    sys.exit(code if isinstance(code, int) else 0)
