"""``memoryd import-file PATH...``: files and folders into memories, with a progress bar.

Each file is queued as an import (the same pipeline as ``POST /v1/imports``)
and run by this process's import worker; the bar advances per chunk or
section as the worker reports them. A file that is refused (binary, too
large, already imported) is reported and the others go on; the exit code
is 1 when any file was refused or failed.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from memoryd.cli.app import _progress, app, console, emit, err, service
from memoryd.errors import MemorydError
from memoryd.imports.service import Imports, read_upload

# what a folder contributes: the formats import reads (other files are left alone)
IMPORTABLE = (".md", ".markdown", ".txt", ".text", ".json", ".jsonl", ".pdf")
POLL_S = 0.2


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


@app.command("import-file")
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
    """Import notes, documents (Markdown, text, PDF) and chat exports (ChatGPT, Claude, JSONL)."""
    files = expand(paths)
    if not files:
        err.print("[red]error:[/red] no importable files found")
        raise typer.Exit(1)
    results: list[dict[str, Any]] = []
    with service() as svc:
        imports = Imports(svc)
        limit = svc.settings.max_import_bytes
        with _progress() as bar:
            for file in files:
                row = bar.add_task(file.name, total=None)
                try:
                    data, name = read_upload(file, limit)
                    task = imports.create(
                        data, name, strategy=strategy, force=force, post_process=extract
                    )
                    while task["status"] == "processing":
                        bar.update(
                            row,
                            total=task["extraction_chunks"] or None,
                            completed=task["extraction_progress"],
                        )
                        time.sleep(POLL_S)
                        task = imports.get(task["id"])
                    bar.update(
                        row,
                        total=task["extraction_chunks"] or 1,
                        completed=task["extraction_chunks"] or 1,
                    )
                    results.append({"path": str(file), **task})
                except MemorydError as exc:
                    bar.update(row, total=1, completed=0)
                    results.append(
                        {"path": str(file), "status": "refused", "errors": [exc.message]}
                    )
    emit(results, lambda: _report(results))
    if any(r["status"] != "completed" for r in results):
        raise typer.Exit(1)


def _report(results: list[dict[str, Any]]) -> None:
    table = Table(header_style="bold")
    for column in ("file", "strategy", "status", "memories", "note"):
        table.add_column(column)
    for r in results:
        ok = r["status"] == "completed"
        table.add_row(
            Path(r["path"]).name,
            str(r.get("strategy") or ""),
            f"[green]{r['status']}[/green]" if ok else f"[red]{r['status']}[/red]",
            str(r.get("memories_created", "")),
            "; ".join(r.get("errors") or []),
        )
    console.print(table)
