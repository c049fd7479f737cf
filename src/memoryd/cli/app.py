"""``memoryd``: the command line door. Human output by default, ``--json`` for scripts."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from memoryd.errors import MemorydError
from memoryd.models import Memory as MemoryRecord
from memoryd.models import ScoredMemory, format_ts, parse_ts
from memoryd.models import State as MemState
from memoryd.portability import count_lines, export_jsonl, import_jsonl, reindex
from memoryd.service import MemoryService
from memoryd.store import MemoryFilter
from memoryd.store.rows import from_us

app = typer.Typer(
    name="memoryd",
    help="Long-term memory for AI agents: add, search and manage memories offline.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
console = Console()
err = Console(stderr=True)
T = TypeVar("T")


class State:
    home: Path | None = None
    as_json: bool = False


state = State()


@app.callback()
def main(
    home: Annotated[
        Path | None,
        typer.Option("--home", envvar="MEMORYD_HOME", help="Data directory (default: XDG)."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    state.home = home
    state.as_json = as_json


@contextmanager
def reported() -> Iterator[None]:
    """Memoryd errors become a message (or the JSON error object) and exit code 1."""
    try:
        yield
    except MemorydError as exc:
        if state.as_json:
            print(json.dumps({"error": {"code": exc.code, "message": exc.message}}))
        else:
            err.print(f"[red]error:[/red] {exc.message}")
        raise typer.Exit(1) from None


@contextmanager
def service() -> Iterator[MemoryService]:
    """A service for one command, its errors reported."""
    svc: MemoryService | None = None
    with reported():
        try:
            svc = MemoryService(state.home)
            yield svc
        finally:
            if svc is not None:
                svc.close()


def emit(data: Any, human: Callable[[], None]) -> None:
    if state.as_json:
        print(json.dumps(data, ensure_ascii=False))
    else:
        human()


def _when(value: datetime | None) -> str:
    return "" if value is None else f"{value:%Y-%m-%d %H:%M}"


def _table(memories: list[MemoryRecord], scores: list[float] | None = None) -> Table:
    table = Table(show_lines=False, header_style="bold")
    if scores is not None:
        table.add_column("score", justify="right")
    table.add_column("id", style="dim", no_wrap=True)
    table.add_column("content")
    table.add_column("category")
    table.add_column("type")
    table.add_column("when", no_wrap=True)
    for i, m in enumerate(memories):
        row = [
            m.id[:8],
            m.content,
            m.category.value,
            m.memory_type.value,
            _when(m.valid_from or m.created_at),
        ]
        if scores is not None:
            row.insert(0, f"{scores[i]:.3f}")
        table.add_row(*row)
    return table


def _show(memory: MemoryRecord) -> None:
    table = Table.grid(padding=(0, 2))
    for key, value in memory.to_json().items():
        table.add_row(
            f"[bold]{key}[/bold]",
            json.dumps(value, ensure_ascii=False) if isinstance(value, list | dict) else str(value),
        )
    console.print(table)


def _progress() -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
        disable=state.as_json,
    )


def _date(value: str | None, name: str) -> datetime | None:
    if value is None:
        return None
    try:
        return parse_ts(value)
    except ValueError:
        err.print(f"[red]error:[/red] {name} must be an ISO date, got {value!r}")
        raise typer.Exit(2) from None


@app.command()
def add(
    content: Annotated[str, typer.Argument(help="What to remember.")],
    category: Annotated[
        str | None, typer.Option(help="profile, preferences, entities, events, cases or patterns.")
    ] = None,
    tag: Annotated[list[str] | None, typer.Option("--tag", "-t", help="Repeatable.")] = None,
    source: Annotated[str | None, typer.Option()] = None,
    importance: Annotated[float | None, typer.Option(min=0.0, max=1.0)] = None,
    key: Annotated[str | None, typer.Option(help="Upsert: one memory per key.")] = None,
    valid_from: Annotated[str | None, typer.Option(help="When the fact began (ISO).")] = None,
    expires_at: Annotated[str | None, typer.Option(help="Forget after (ISO).")] = None,
    replaces: Annotated[
        str | None, typer.Option(help="The id of the memory this one changes (kept as history).")
    ] = None,
) -> None:
    """Remember something now (a pinned memory); a change of a known fact supersedes it."""
    with service() as svc:
        memory = svc.add(
            content,
            category=category,
            tags=tag,
            source=source,
            importance=importance,
            key=key,
            replaces=replaces,
            valid_from=_date(valid_from, "--valid-from"),
            expires_at=_date(expires_at, "--expires-at"),
        )
    old = [r.target_id for r in memory.relations if r.relation_type.value == "supersedes"]
    note = f" (supersedes {', '.join(old)})" if old else ""
    emit(memory.to_json(), lambda: console.print(f"[green]added[/green] {memory.id}{note}"))


@app.command()
def search(
    query: Annotated[str, typer.Argument(help="What you are looking for.")],
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, max=1000)] = 10,
    min_score: Annotated[float | None, typer.Option(min=0.0, max=1.0)] = None,
    category: Annotated[str | None, typer.Option()] = None,
    tag: Annotated[list[str] | None, typer.Option("--tag", "-t")] = None,
    memory_type: Annotated[str | None, typer.Option("--type")] = None,
    as_of: Annotated[str | None, typer.Option(help="What was true then (ISO).")] = None,
    trace: Annotated[bool, typer.Option(help="Show each retrieval stage.")] = False,
) -> None:
    """Hybrid (semantic + keyword) search."""
    with service() as svc:
        response = svc.search(
            query,
            limit=limit,
            min_score=min_score,
            category=category,
            tags=tag,
            memory_type=memory_type,
            as_of=_date(as_of, "--as-of"),
            include_trace=trace,
        )
    results: list[ScoredMemory] = response.results

    def human() -> None:
        if not results:
            console.print("[yellow]no memories matched[/yellow]")
        else:
            console.print(_table([r.memory for r in results], [r.score for r in results]))
        if response.trace:
            for stage in response.trace.stages:
                console.print(
                    f"  {stage.name:<22} {stage.input_count:>4} → "
                    f"{stage.output_count:<4} {stage.duration_ms:8.2f} ms"
                )

    emit(
        {
            "results": [{"memory": r.memory.to_json(), "score": r.score} for r in results],
            **({"trace": response.trace.model_dump()} if response.trace else {}),
        },
        human,
    )


@app.command("list")
def list_(
    limit: Annotated[int, typer.Option("--limit", "-n", min=0, max=1000)] = 20,
    offset: Annotated[int, typer.Option(min=0)] = 0,
    category: Annotated[str | None, typer.Option()] = None,
    memory_type: Annotated[str | None, typer.Option("--type")] = None,
    mem_state: Annotated[str | None, typer.Option("--state")] = None,
    tag: Annotated[list[str] | None, typer.Option("--tag", "-t")] = None,
    sort: Annotated[str, typer.Option()] = "created_at",
    order: Annotated[str, typer.Option()] = "desc",
) -> None:
    """Browse memories (conversation turns only with --type session)."""
    with service() as svc:
        memories, total = svc.list_memories(
            limit=limit,
            offset=offset,
            category=category,
            memory_type=memory_type,
            state=mem_state,
            tags=tag,
            sort=sort,
            order=order,
        )

    def human() -> None:
        console.print(_table(memories))
        console.print(f"[dim]{len(memories)} of {total}[/dim]")

    emit(
        {
            "memories": [m.to_json() for m in memories],
            "total_count": total,
            "limit": limit,
            "offset": offset,
        },
        human,
    )


@app.command()
def get(memory_id: Annotated[str, typer.Argument()]) -> None:
    """Show one memory, every field."""
    with service() as svc:
        memory = svc.get(memory_id)
    emit(memory.to_json(), lambda: _show(memory))


@app.command()
def update(
    memory_id: Annotated[str, typer.Argument()],
    content: Annotated[str | None, typer.Option()] = None,
    category: Annotated[str | None, typer.Option()] = None,
    tag: Annotated[list[str] | None, typer.Option("--tag", "-t")] = None,
    mem_state: Annotated[str | None, typer.Option("--state")] = None,
    importance: Annotated[float | None, typer.Option(min=0.0, max=1.0)] = None,
) -> None:
    """Change a memory; new content is re-embedded."""
    with service() as svc:
        memory = svc.update(
            memory_id,
            content=content,
            category=category,
            tags=tag,
            state=mem_state,
            importance=importance,
        )
    emit(memory.to_json(), lambda: console.print(f"[green]updated[/green] {memory.id}"))


@app.command()
def forget(memory_id: Annotated[str, typer.Argument()]) -> None:
    """Delete a memory (soft: its history is kept)."""
    with service() as svc:
        svc.delete(memory_id)
    emit(
        {"status": "deleted", "id": memory_id},
        lambda: console.print(f"[green]forgotten[/green] {memory_id}"),
    )


@app.command()
def stats() -> None:
    """Counts by type, category, tier and state."""
    with service() as svc:
        data = svc.stats()

    def human() -> None:
        table = Table.grid(padding=(0, 2))
        for key, value in data.items():
            table.add_row(
                f"[bold]{key}[/bold]",
                json.dumps(value) if isinstance(value, dict | list) else str(value),
            )
        console.print(table)

    emit(data, human)


@app.command()
def export(
    path: Annotated[Path, typer.Argument(help="Output .jsonl file, or - for stdout.")],
) -> None:
    """Write every memory (and raw message) as JSON Lines."""
    with service() as svc:
        total = svc.store.count(svc.tenant_id, [svc.space_id], MemoryFilter(state=list(MemState)))
        if str(path) == "-":
            count = export_jsonl(svc, sys.stdout)
            return
        with _progress() as bar, path.open("w", encoding="utf-8") as out:
            task = bar.add_task("exporting", total=total)
            count = export_jsonl(svc, out, lambda n: bar.advance(task, n))
    emit(
        {"exported": count, "path": str(path)},
        lambda: console.print(f"[green]exported[/green] {count} memories to {path}"),
    )


@app.command("import")
def import_(path: Annotated[Path, typer.Argument(exists=True, dir_okay=False)]) -> None:
    """Load a memoryd export; ids already present are skipped."""
    with service() as svc, _progress() as bar, path.open(encoding="utf-8") as lines:
        task = bar.add_task("importing", total=count_lines(path))
        result = import_jsonl(svc, lines, lambda n: bar.advance(task, n))
    emit(
        result,
        lambda: console.print(
            f"[green]imported[/green] {result['imported']} memories, skipped "
            f"{result['skipped']}, {result['messages']} messages"
        ),
    )


@app.command("reindex")
def reindex_() -> None:
    """Re-embed every memory with the configured model (after changing models)."""
    with service() as svc, _progress() as bar:
        total = svc.store.conn.execute("SELECT COUNT(*) FROM memories").fetchone()[0]
        task = bar.add_task("re-embedding", total=total)
        count = reindex(svc, lambda n: bar.advance(task, n))
        model = svc.store.get_meta("embed_model")
    emit(
        {"reindexed": count, "model": model},
        lambda: console.print(f"[green]re-embedded[/green] {count} memories with {model}"),
    )


@app.command()
def history(memory_id: Annotated[str, typer.Argument()]) -> None:
    """Every recorded change of a memory, oldest first."""
    with service() as svc:
        rows = svc.history(memory_id)
    for row in rows:
        row["at"] = format_ts(from_us(row["at"]))

    def human() -> None:
        for row in rows:
            console.print(f"[bold]{row['at']}[/bold] {row['action']}")
            if row["old"]:
                console.print(f"  [red]- {json.dumps(row['old'], ensure_ascii=False)}[/red]")
            console.print(f"  [green]+ {json.dumps(row['new'], ensure_ascii=False)}[/green]")

    emit(rows, human)
