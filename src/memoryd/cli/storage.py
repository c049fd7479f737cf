"""``memoryd check``, ``backup`` and ``restore``: the database file's health and the way back."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from memoryd.cli.app import app, console, emit, err, reported, state

if TYPE_CHECKING:
    from memoryd.store.maintenance import Snapshot

MAX_PROBLEMS_SHOWN = 20


def database() -> Path:
    """The home's database file (the home from --home, MEMORYD_HOME or the default)."""
    from memoryd.config import load_settings  # the store loads with the command, not --help
    from memoryd.store import DB_FILENAME

    return load_settings(state.home).home / DB_FILENAME


def _size(n: int) -> str:
    return f"{n / 1024 / 1024:.1f} MB" if n >= 1024 * 1024 else f"{n / 1024:.0f} KB"


def _described(snapshot: Snapshot) -> dict[str, object]:
    return {
        "path": str(snapshot.path),
        "bytes": snapshot.bytes,
        "memories": snapshot.memories,
        "schema_version": snapshot.version,
    }


@app.command("check")
def check_(
    quick: Annotated[
        bool, typer.Option("--quick", help="Pages and records only (what serve runs at start).")
    ] = False,
) -> None:
    """Check the database file for damage: SQLite's full integrity check and the search indexes.

    Exits 1 when anything is damaged; restore a backup with `memoryd restore`.
    """
    from memoryd.store.maintenance import check

    with reported():
        path = database()
        problems = check(path, full=not quick)
    emit(
        {"path": str(path), "ok": not problems, "problems": problems},
        lambda: (
            console.print(f"[green]ok[/green] {path}")
            if not problems
            else err.print(
                f"[red]damaged:[/red] {path}\n  "
                + "\n  ".join(problems[:MAX_PROBLEMS_SHOWN])
                + "\nRestore the last good backup with `memoryd restore BACKUP`."
            )
        ),
    )
    if problems:
        raise typer.Exit(1)


@app.command("backup")
def backup_(
    path: Annotated[
        Path, typer.Argument(help="The backup file, or a folder to put a dated one in.")
    ],
) -> None:
    """Copy the database, with every committed write, to PATH; safe while the server runs.

    Uses SQLite's online backup, so the copy is one consistent snapshot that
    includes the write-ahead log (a plain copy of memoryd.db misses recent
    writes). The copy is checked before it replaces an existing PATH.
    """
    from memoryd.store.maintenance import backup

    with reported():
        made = backup(database(), path)
    emit(
        _described(made),
        lambda: console.print(
            f"[green]backed up[/green] {made.memories} memories ({_size(made.bytes)}) "
            f"to {made.path}"
        ),
    )


@app.command("restore")
def restore_(
    path: Annotated[Path, typer.Argument(help="A backup made by `memoryd backup`.")],
) -> None:
    """Replace the database with the backup at PATH (stop the server first).

    The backup is checked in full before anything changes; the files it
    replaces are kept beside it as memoryd.db.replaced-<time>.
    """
    from memoryd.store.maintenance import restore

    with reported():
        done = restore(path, database())
    emit(
        {**_described(done.snapshot), "moved_aside": [str(p) for p in done.moved_aside]},
        lambda: console.print(
            f"[green]restored[/green] {done.snapshot.memories} memories from {path} into "
            f"{done.snapshot.path}"
            + "".join(f"\n  kept the replaced file as {p}" for p in done.moved_aside)
        ),
    )
