"""``memoryd import-file PATH...`` and ``memoryd imports …``: files into memories, followed.

Each file is queued as an import (the same pipeline as ``POST /v1/imports``)
and run by this process's import worker; the bar advances per chunk or
section as the worker reports them. A file that is refused (binary, too
large, already imported) is reported and the others go on; the exit code
is 1 when any file was refused or failed.

Ctrl-C stops the import at its next unit, rolls back what it wrote and
leaves it queued: ``memoryd imports resume ID``, or importing the same file
again, runs it again. ``memoryd imports`` lists, shows and rolls back imports.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from memoryd.cli.app import (
    DATA,
    INTERRUPTED,
    app,
    console,
    emit,
    err,
    fail,
    progress_bar,
    service,
    show_fields,
)
from memoryd.errors import MemorydError, ValidationError

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID

    from memoryd.imports.service import Imports
    from memoryd.service import MemoryService

# what a folder contributes: the formats import reads (other files are left alone)
IMPORTABLE = (".md", ".markdown", ".txt", ".text", ".json", ".jsonl", ".pdf")
POLL_S = 0.2

imports_app = typer.Typer(
    name="imports",
    help="File imports: list, show, resume an unfinished one, roll one back.",
    no_args_is_help=True,
)
app.add_typer(imports_app, name="imports", rich_help_panel=DATA)
ImportId = Annotated[
    str, typer.Argument(metavar="ID", help="An import id, or a unique start of it (4+ characters).")
]


def _imports(svc: MemoryService) -> Imports:
    from memoryd.imports.service import Imports  # the readers load with the import commands

    return Imports(svc)


def expand(paths: list[Path]) -> list[Path]:
    """Files as given, and the importable files under each folder, in name order."""
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            found = sorted(p for p in path.rglob("*") if p.is_file())
            files += [p for p in found if p.suffix.lower() in IMPORTABLE]
        else:
            files.append(path)
    return files


@app.command("import-file", rich_help_panel=DATA)
def import_file(
    paths: Annotated[list[Path], typer.Argument(help="Files or folders to import.")],
    strategy: Annotated[
        str, typer.Option(help="auto, atomic (facts), section (one per heading), document.")
    ] = "auto",
    force: Annotated[bool, typer.Option(help="Import content imported before again.")] = False,
    extract: Annotated[
        bool, typer.Option(help="Distil memories; --no-extract stores the text as chunks.")
    ] = True,
) -> None:
    """Import notes, documents (Markdown, text, PDF) and chat exports (ChatGPT, Claude, JSONL).

    Text is stored as passages (listed with --type session) and distilled into memories.
    """
    from memoryd.imports.service import read_upload

    files = expand(paths)
    if not files:
        raise fail(ValidationError("no importable files found"))
    results: list[dict[str, Any]] = []
    with service() as svc:
        imports = _imports(svc)
        limit = svc.settings.max_import_bytes
        with progress_bar() as bar:
            for file in files:
                row = bar.add_task(file.name, total=None)
                try:
                    data, name = read_upload(file, limit)
                    task = imports.create(
                        data, name, strategy=strategy, force=force, post_process=extract
                    )
                    if task.pop("resumed", False):
                        err.print(f"{file.name}: resuming unfinished import {task['id']}")
                    task = follow(svc, task, bar, row)
                    results.append({"path": str(file), **task})
                except MemorydError as exc:
                    bar.update(row, total=1, completed=0)
                    results.append(
                        {"path": str(file), "status": "refused", "errors": [exc.message]}
                    )
    emit(results, lambda: _report(results))
    if any(r["status"] != "completed" for r in results):
        raise typer.Exit(1)


def follow(svc: MemoryService, task: dict[str, Any], bar: Progress, row: TaskID) -> dict[str, Any]:
    """Poll an import until it ends, moving the bar; Ctrl-C pauses it (resumable) and exits."""
    imports = _imports(svc)
    try:
        while task["status"] == "processing":
            bar.update(
                row, total=task["extraction_chunks"] or None, completed=task["extraction_progress"]
            )
            time.sleep(POLL_S)
            task = imports.get(task["id"])
    except KeyboardInterrupt:
        bar.stop()
        err.print(f"interrupted: stopping import {task['id']} after its current step…")
        svc.engine.interrupt()
        svc.close()  # waits for that step only, then the worker releases the import
        err.print(
            f"import {task['id']} stopped; what it wrote is rolled back. It stays queued: "
            f"a memoryd server on this home takes it up again at once, "
            f"`memoryd imports resume {task['id'][:8]}` runs it here, "
            f"`memoryd imports rollback {task['id'][:8]}` drops it."
        )
        raise typer.Exit(INTERRUPTED) from None
    done = task["extraction_chunks"] or 1
    bar.update(row, total=done, completed=done)
    return task


def _report(results: list[dict[str, Any]]) -> None:
    table = Table(header_style="bold")
    for column in ("file", "strategy", "status", "memories", "note"):
        table.add_column(column)
    for r in results:
        ok = r["status"] == "completed"
        table.add_row(
            escape(Path(r["path"]).name),
            str(r.get("strategy") or ""),
            f"[green]{r['status']}[/green]" if ok else f"[red]{r['status']}[/red]",
            str(r.get("memories_created", "")),
            escape("; ".join([*(r.get("notes") or []), *(r.get("errors") or [])])),
        )
    console.print(table)


# ---------------------------------------------------------------------- memoryd imports
@imports_app.command("list")
def list_imports(
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, max=1000, help="At most.")] = 50,
) -> None:
    """Imports, newest first, with their status and counts."""
    with service() as svc:
        found = _imports(svc).list(limit)

    def human() -> None:
        if not found["imports"]:
            console.print("[yellow]no imports[/yellow]")
            return
        table = Table(header_style="bold")
        for column in ("id", "file", "status", "strategy", "progress", "memories", "created"):
            table.add_column(column)
        for t in found["imports"]:
            table.add_row(
                t["id"][:8],
                escape(t["filename"] or ""),
                t["status"],
                t["strategy"] or "",
                f"{t['extraction_progress']}/{t['extraction_chunks']}",
                str(t["memories_created"]),
                (t["created_at"] or "")[:16].replace("T", " "),
            )
        console.print(table)
        console.print(f"[dim]{len(found['imports'])} of {found['total']}[/dim]")

    emit(found, human)


@imports_app.command("show")
def show_import(import_id: ImportId) -> None:
    """One import: every field of its task."""
    with service() as svc:
        task = _imports(svc).get(import_id)
    emit(task, lambda: show_fields(task))


@imports_app.command("resume")
def resume_import(import_id: ImportId) -> None:
    """Run an unfinished import (interrupted or killed) to its end, here."""
    with service() as svc:
        task = _imports(svc).resume(import_id)
        with progress_bar() as bar:
            task = follow(svc, task, bar, bar.add_task(task["filename"] or task["id"], total=None))
    emit(task, lambda: _report([{"path": task["filename"] or task["id"], **task}]))
    if task["status"] != "completed":
        raise typer.Exit(1)


@imports_app.command("rollback")
def rollback_import(import_id: ImportId) -> None:
    """Remove what an import created and restore what it changed (an unfinished one too)."""
    with service() as svc:
        result = _imports(svc).rollback(import_id)
    emit(
        result,
        lambda: console.print(
            f"[green]rolled back[/green]: {result['deleted_memories']} memories and "
            f"{result['deleted_sessions']} messages removed"
        ),
    )
