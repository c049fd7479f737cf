"""The ``python -m bench`` application and what its commands share: options, checks, reports.

The commands register themselves on :data:`app` from
:mod:`bench.quality_commands` (retrieval quality) and
:mod:`bench.speed_commands` (speed and load).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from bench.common import WORK_DIR, git_commit, machine, write_report
from memoryd.retrieve.config import RECIPES, SearchConfig

app = typer.Typer(
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="memoryd retrieval and speed benchmarks.",
)
console = Console()
REPORTS = WORK_DIR


JobsOption = Annotated[
    int,
    typer.Option(
        min=1,
        help="Worker processes, one model thread each (a many-core machine: its core count).",
    ),
]
IngestOption = Annotated[
    str, typer.Option(help="raw (turns only) or smart (turns and distilled memories).")
]

DatabaseOption = Annotated[
    str | None,
    typer.Option(
        help="PostgreSQL too: a postgresql:// URL, or pgserver (a throwaway server started "
        "in the bench directory).",
    ),
]


def database_url(spec: str | None) -> str | None:
    if spec and spec != "pgserver" and not spec.startswith(("postgresql://", "postgres://")):
        raise typer.BadParameter("--database must be a postgresql:// URL or pgserver")
    return spec


def check_ingest(mode: str) -> None:
    if mode not in ("raw", "smart"):
        raise typer.BadParameter("--ingest must be raw or smart")


def recipe_named(name: str) -> SearchConfig:
    if name not in RECIPES:
        raise typer.BadParameter(f"unknown recipe {name!r}; one of {', '.join(RECIPES)}")
    return RECIPES[name]


def stamp(report: dict[str, Any]) -> None:
    """What every report carries besides its numbers: the commit and the machine."""
    report.update(commit=git_commit(), cores=machine()["cores"], machine=machine())


def publish(
    report: dict[str, Any], out: Path, show: Callable[[dict[str, Any], Console], None]
) -> None:
    """Stamp the report, write it to ``out``, print its tables and where it went."""
    stamp(report)
    write_report(out, report)
    show(report, console)
    console.print(f"report: {out}")
