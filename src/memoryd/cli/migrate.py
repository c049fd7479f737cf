"""``memoryd migrate``: the home's SQLite database into PostgreSQL, or back."""

from __future__ import annotations

from typing import Annotated

import typer

from memoryd.cli.app import DATA, app, console, emit, progress_bar, reported, state
from memoryd.errors import ValidationError


@app.command("migrate", rich_help_panel=DATA)
def migrate(
    to: Annotated[
        str | None,
        typer.Option("--to", metavar="URL", help="Copy the home's SQLite into this PostgreSQL."),
    ] = None,
    from_: Annotated[
        str | None,
        typer.Option("--from", metavar="URL", help="Copy this PostgreSQL into the home's SQLite."),
    ] = None,
    force: Annotated[
        bool,
        typer.Option("--force", help="Copy into a database that already holds memories."),
    ] = False,
) -> None:
    """Copy every record (ids, history, sessions, vectors, spaces, tenants, hashed keys)
    between the home's SQLite file and a PostgreSQL database, losslessly.

    Interrupted, the same command again resumes where it stopped.
    """
    with reported():
        if (to is None) == (from_ is None):
            raise ValidationError("name one of --to URL (into PostgreSQL) or --from URL (back)")
        from memoryd.config import load_settings
        from memoryd.store import DB_FILENAME, SQLiteStore
        from memoryd.store.postgres import PostgresStore
        from memoryd.store.postgres.migrate import copy

        url = to or from_
        assert url is not None
        path = load_settings(state.home, database_url="").home / DB_FILENAME
        if to is not None and not path.exists():
            raise ValidationError(f"there is no memoryd database at {path} to copy")
        pg, sqlite = PostgresStore(url), SQLiteStore(path)
        try:
            with progress_bar() as bar:
                task = bar.add_task("copying", total=None)
                result = copy(
                    pg,
                    sqlite,
                    to_postgres=to is not None,
                    force=force,
                    progress=lambda table, n: bar.update(
                        task, advance=n, description=f"copying {table}"
                    ),
                    totals=lambda total: bar.update(task, total=total),
                )
        finally:
            pg.close()
            sqlite.close()
    target = pg.where if to is not None else str(path)
    emit(
        {
            "target": target,
            "copied": result.copied,
            "resumed": result.resumed,
            "not_copied": result.left_behind,
        },
        lambda: _summary(target, result.copied, result.left_behind, result.resumed),
    )


def _summary(target: str, copied: dict[str, int], left: dict[str, int], resumed: bool) -> None:
    rows = sum(copied.values())
    console.print(
        f"[green]copied[/green] {rows} rows into {target}"
        + (" (resumed)" if resumed else "")
        + f": {copied.get('memories', 0)} memories, {copied.get('memory_history', 0)} history "
        f"rows, {copied.get('session_messages', 0)} session messages"
    )
    if left:
        console.print(
            "not copied (the context engine's records stay in SQLite for now): "
            + ", ".join(f"{n} {name}" for name, n in left.items())
        )
