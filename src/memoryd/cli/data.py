"""Moving data in and out: export, import, reindex, conversation ingest and its tasks."""

from __future__ import annotations

import codecs
import json
import sys
from contextlib import nullcontext
from pathlib import Path
from typing import Annotated, Any

import typer

from memoryd.cli.app import (
    DATA,
    app,
    console,
    emit,
    fail,
    progress_bar,
    service,
    show_fields,
    state,
)
from memoryd.errors import ValidationError
from memoryd.terms import State, wire

# how long `ingest --mode smart` waits for the distillation before leaving it queued
SMART_WAIT_S = 120.0


@app.command(rich_help_panel=DATA)
def export(
    path: Annotated[Path, typer.Argument(help="Output .jsonl file, or - for stdout.")],
) -> None:
    """Write every memory, its history and the raw messages as JSON Lines."""
    from memoryd.portability import export_jsonl  # loaded by the command, not by --help
    from memoryd.store import MemoryFilter

    with service() as svc:
        total = svc.store.count(svc.tenant_id, [svc.space_id], MemoryFilter(state=list(State)))
        if str(path) == "-":
            export_jsonl(svc, sys.stdout)
            return
        with progress_bar() as bar, path.open("w", encoding="utf-8") as out:
            task = bar.add_task("exporting", total=total)
            count = export_jsonl(svc, out, lambda n: bar.advance(task, n))
    emit(
        {"exported": count, "path": str(path)},
        lambda: console.print(f"[green]exported[/green] {count} memories to {path}"),
    )


@app.command("import", rich_help_panel=DATA)
def import_(
    path: Annotated[
        Path, typer.Argument(exists=True, dir_okay=False, help="A memoryd export (.jsonl).")
    ],
) -> None:
    """Load a memoryd export (ids already present are skipped); import-file takes documents."""
    from memoryd.portability import count_lines, import_jsonl

    _check_export(path)
    with service() as svc, progress_bar() as bar, path.open(encoding="utf-8") as lines:
        task = bar.add_task("importing", total=count_lines(path))
        result = import_jsonl(svc, lines, lambda n: bar.advance(task, n))
    emit(
        result,
        lambda: console.print(
            f"[green]imported[/green] {result['imported']} memories, skipped "
            f"{result['skipped']}, {result['messages']} messages"
        ),
    )


# how much of a file is read to tell an export from a document
EXPORT_SNIFF_BYTES = 64 * 1024


def _check_export(path: Path) -> None:
    """A document given where an export goes (a Markdown file, a PDF) is named as such,
    with the command that takes it, before anything is read into the store."""
    with path.open("rb") as fh:
        head = fh.read(EXPORT_SNIFF_BYTES)
    try:  # a character cut at the end of what was read is no error
        codecs.getincrementaldecoder("utf-8")().decode(head, final=False)
    except UnicodeDecodeError:
        return  # not UTF-8 at all: the import's own reading says so, naming the line
    first = next((line for line in head.splitlines() if line.strip()), b"").strip()
    if first and not first.startswith(b"{"):
        raise fail(
            ValidationError(
                f"{path} is not a memoryd export (its first line is not a JSON object): "
                "`memoryd import` loads what `memoryd export` wrote; for a document, use "
                f"`memoryd import-file {path}`"
            )
        )


@app.command("reindex", rich_help_panel=DATA)
def reindex_() -> None:
    """Re-embed every memory with the configured model (after changing models)."""
    from memoryd.portability import reindex

    with service() as svc, progress_bar() as bar:
        total = svc.engine.sqlite_store.conn.execute("SELECT COUNT(*) FROM memories").fetchone()[0]
        task = bar.add_task("re-embedding", total=total)
        count = reindex(svc, lambda n: bar.advance(task, n))
        model = svc.store.get_meta("embed_model")
    emit(
        {"reindexed": count, "model": model},
        lambda: console.print(f"[green]re-embedded[/green] {count} memories with {model}"),
    )


def read_messages(path: str) -> list[dict[str, Any]]:
    """Messages from a JSON array or JSON Lines, ``-`` for stdin: {role, content, created_at?}."""
    try:
        text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ValidationError(f"cannot read {path}: {exc}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        data = None
    if isinstance(data, dict) and isinstance(data.get("messages"), list):
        data = data["messages"]
    if isinstance(data, list):
        return data
    from memoryd.text.conversation import MAX_MESSAGES

    messages = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            messages.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise ValidationError(
                f"{path}: line {number} is not JSON ({exc.msg}); give a JSON array of "
                '{"role": ..., "content": ...} messages, or one such object a line'
            ) from None
        if len(messages) > MAX_MESSAGES:
            break
    return messages


@app.command(rich_help_panel=DATA)
def ingest(
    path: Annotated[
        str,
        typer.Argument(
            metavar="FILE",
            help='Messages as a JSON array or JSON Lines ({"role", "content", "created_at"?}); '
            "- for stdin.",
        ),
    ],
    session: Annotated[
        str | None,
        typer.Option(metavar="ID", help="The conversation they belong to (repeats are skipped)."),
    ] = None,
    agent: Annotated[
        str | None, typer.Option(metavar="ID", help="The agent that took part.")
    ] = None,
    mode: Annotated[
        str,
        typer.Option(
            metavar="MODE",
            help="raw: store the turns; smart: also distil them into memories (waits for it).",
        ),
    ] = "raw",
    tag: Annotated[
        list[str] | None, typer.Option("--tag", "-t", metavar="TAG", help="A tag (repeatable).")
    ] = None,
    source: Annotated[str | None, typer.Option(metavar="TEXT", help="Where it came from.")] = None,
) -> None:
    """Store a conversation: every message verbatim and searchable, distilled with --mode smart."""
    with service() as svc:
        messages = read_messages(path)
        result = svc.ingest(
            messages, session_id=session, agent_id=agent, mode=mode, tags=tag, source=source
        )
        task = svc.task(result.task_id)
        if mode == "smart":
            if not task_done(task):
                svc.start_worker()
            waiting = nullcontext() if state.as_json else console.status("distilling…")
            with waiting:
                try:
                    task = svc.wait_for_task(result.task_id, SMART_WAIT_S)
                except ValidationError:
                    task = svc.task(result.task_id)
    data = {**result.model_dump(), "task": wire(task)}

    def human() -> None:
        console.print(
            f"[green]stored[/green] {result.stored_count} of {len(messages)} messages in "
            f"session {result.session_id} (task {result.task_id})"
        )
        if mode == "smart":
            console.print(_task_line(task))

    emit(data, human)


def task(
    task_id: Annotated[
        str, typer.Argument(metavar="ID", help="A task id (from ingest), or a unique start of it.")
    ],
) -> None:
    """The status of a conversation-ingest task: counts, decisions, errors."""
    with service() as svc:
        found = wire(svc.task(task_id))
    emit(found, lambda: show_fields(found))


def task_done(task: dict[str, Any]) -> bool:
    return task["status"] in ("completed", "failed")


def _task_line(task: dict[str, Any]) -> str:
    decisions = task.get("decisions") or {}
    parts = [f"{k} {v}" for k, v in decisions.items()]
    line = f"task {task['status']}: {task.get('facts_extracted', 0)} facts"
    if parts:
        line += " (" + ", ".join(parts) + ")"
    if task.get("errors"):
        line += "; errors: " + "; ".join(task["errors"])
    if not task_done(task):
        line += "; it goes on in the background of the next memoryd process (serve, a hook)"
    return line
