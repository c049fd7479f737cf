"""The memory commands: add, search, list, get, update, forget, history, stats, delete-all.

Ids are shown by their first 8 characters; every command that takes an id
takes that, or any unique start of it (``memoryd.ids``).
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from memoryd.cli.app import (
    MEMORIES,
    app,
    console,
    emit,
    fail,
    iso_time,
    memory_table,
    read_text,
    service,
    show_fields,
    state,
)
from memoryd.errors import ValidationError
from memoryd.ids import short
from memoryd.terms import (
    SORT_COLUMNS,
    Category,
    MemoryType,
    RelationType,
    State,
    format_ts,
    utcnow,
)

IdArg = Annotated[
    str, typer.Argument(metavar="ID", help="A memory id, or a unique start of it (4+ characters).")
]
CategoryOpt = Annotated[
    Category | None,
    typer.Option(
        metavar="CATEGORY", help="profile, preferences, entities, events, cases or patterns."
    ),
]
TagOpt = Annotated[
    list[str] | None, typer.Option("--tag", "-t", metavar="TAG", help="A tag (repeatable).")
]
TypeOpt = Annotated[
    MemoryType | None,
    typer.Option(
        "--type",
        metavar="TYPE",
        help="pinned (added directly), insight (distilled), session (conversation turns).",
    ),
]


@app.command(rich_help_panel=MEMORIES)
def add(
    content: Annotated[
        str, typer.Argument(help="What to remember; - reads it from stdin (for long text).")
    ],
    category: Annotated[
        Category | None,
        typer.Option(
            metavar="CATEGORY",
            help="profile, preferences, entities, events, cases or patterns (default preferences).",
        ),
    ] = None,
    tag: TagOpt = None,
    source: Annotated[
        str | None, typer.Option(metavar="TEXT", help="Where it came from (free text).")
    ] = None,
    importance: Annotated[
        float | None,
        typer.Option(min=0.0, max=1.0, help="How much it matters, 0 to 1 (default 0.5)."),
    ] = None,
    key: Annotated[
        str | None,
        typer.Option(
            metavar="KEY",
            help="A slot: a new value for the key replaces the old one (kept as history).",
        ),
    ] = None,
    valid_from: Annotated[
        datetime | None,
        typer.Option(parser=iso_time, metavar="ISO", help="When the fact became true."),
    ] = None,
    expires_at: Annotated[
        datetime | None,
        typer.Option(parser=iso_time, metavar="ISO", help="Forget it after this moment."),
    ] = None,
    replaces: Annotated[
        str | None,
        typer.Option(
            metavar="ID",
            help="The memory this one changes (kept as history); a change of a known fact "
            '("I live in Munich" after "I live in Berlin") is found without it.',
        ),
    ] = None,
) -> None:
    """Remember something now (a pinned memory); the same text again is not stored twice,
    and a change of a known fact supersedes it."""
    text = read_text(content)
    started = utcnow()
    with service() as svc:
        memory = svc.add(
            text,
            category=category,
            tags=tag,
            source=source,
            importance=importance,
            key=key,
            replaces=replaces,
            valid_from=valid_from,
            expires_at=expires_at,
        )
    # ids as tables show them (every command takes them back): a line fits 80 columns
    replaced = [
        short(r.target_id) for r in memory.relations if r.relation_type is RelationType.SUPERSEDES
    ]
    new = short(memory.id)
    if memory.created_at < started:
        said = f"[yellow]already remembered[/yellow] {new}"
    elif key and replaced:
        said = f"[green]replaced[/green] {replaced[-1]} with {new} (key {escape(key)})"
    elif replaced:
        said = f"[green]added[/green] {new} (supersedes {', '.join(replaced)})"
    else:
        said = f"[green]added[/green] {new}"
    emit(memory.to_json(), lambda: console.print(said))


@app.command(rich_help_panel=MEMORIES)
def search(
    query: Annotated[str, typer.Argument(help="What you are looking for.")],
    limit: Annotated[
        int, typer.Option("--limit", "-n", min=1, max=1000, help="Results at most.")
    ] = 10,
    min_score: Annotated[
        float | None,
        typer.Option(
            min=0.0, max=1.0, help="Drop results below this relative score (default 0.2)."
        ),
    ] = None,
    min_similarity: Annotated[
        float | None,
        typer.Option(
            min=0.0, max=1.0, help="Drop results less similar to the query than this (absolute)."
        ),
    ] = None,
    category: CategoryOpt = None,
    tag: TagOpt = None,
    memory_type: TypeOpt = None,
    as_of: Annotated[
        datetime | None,
        typer.Option(parser=iso_time, metavar="ISO", help="What was true then."),
    ] = None,
    trace: Annotated[bool, typer.Option(help="Show each retrieval stage.")] = False,
) -> None:
    """Hybrid (semantic + keyword) search over the active memories."""
    with service() as svc:
        response = svc.search(
            query,
            limit=limit,
            min_score=min_score,
            min_similarity=min_similarity,
            category=category,
            tags=tag,
            memory_type=memory_type,
            as_of=as_of,
            include_trace=trace,
        )
    results = response.results

    def human() -> None:
        if not results:
            console.print("[yellow]no memories matched[/yellow]")
        else:
            console.print(
                memory_table(
                    [r.memory for r in results],
                    [r.score for r in results],
                    [r.similarity for r in results],
                )
            )
        if response.trace:
            for stage in response.trace.stages:
                console.print(
                    f"  {stage.name:<22} {stage.input_count:>4} → "
                    f"{stage.output_count:<4} {stage.duration_ms:8.2f} ms"
                )

    emit(
        {
            "results": [
                {"memory": r.memory.to_json(), "score": r.score, "similarity": r.similarity}
                for r in results
            ],
            **({"trace": response.trace.model_dump()} if response.trace else {}),
        },
        human,
    )


@app.command("list", rich_help_panel=MEMORIES)
def list_(
    limit: Annotated[
        int, typer.Option("--limit", "-n", min=0, max=1000, help="Memories at most.")
    ] = 20,
    offset: Annotated[int, typer.Option(min=0, help="Skip this many first.")] = 0,
    category: CategoryOpt = None,
    memory_type: TypeOpt = None,
    mem_state: Annotated[
        State | None,
        typer.Option(
            "--state",
            metavar="STATE",
            help="active, archived or deleted (default: all but deleted).",
        ),
    ] = None,
    tag: TagOpt = None,
    sort: Annotated[
        str, typer.Option(help=f"Sort by {', '.join(SORT_COLUMNS)}.", metavar="FIELD")
    ] = "created_at",
    order: Annotated[str, typer.Option(help="asc or desc.", metavar="ORDER")] = "desc",
    current: Annotated[
        bool, typer.Option("--current", help="Only what holds now: nothing superseded or ended.")
    ] = False,
) -> None:
    """Browse memories, newest first (conversation turns and imported passages: --type session).

    A memory that no longer holds says so beside its type (superseded, ended, archived)."""
    if sort not in SORT_COLUMNS or order not in ("asc", "desc"):
        raise fail(
            ValidationError(
                f"--sort takes {', '.join(SORT_COLUMNS)} and --order asc or desc; "
                f"got {sort!r} and {order!r}"
            )
        )
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
            current=current,
        )
        hidden = 0  # what a plain list leaves out and --type session would show
        if not memory_type:
            hidden = svc.list_memories(
                limit=0, memory_type="session", state=mem_state, category=category, tags=tag
            )[1]

    def human() -> None:
        console.print(memory_table(memories))
        note = f"{len(memories)} of {total}"
        if hidden:
            note += f"; {hidden} conversation turns and passages: list --type session"
        console.print(f"[dim]{note}[/dim]")

    emit(
        {
            "memories": [m.to_json() for m in memories],
            "total_count": total,
            "limit": limit,
            "offset": offset,
        },
        human,
    )


@app.command(rich_help_panel=MEMORIES)
def get(memory_id: IdArg) -> None:
    """Show one memory, every field (deleted ones too)."""
    with service() as svc:
        memory = svc.get(memory_id)
    emit(memory.to_json(), lambda: show_fields(memory.to_json()))


@app.command(rich_help_panel=MEMORIES)
def update(
    memory_id: IdArg,
    content: Annotated[
        str | None,
        typer.Option(metavar="TEXT", help="New content (re-embedded); - reads it from stdin."),
    ] = None,
    category: CategoryOpt = None,
    tag: Annotated[
        list[str] | None,
        typer.Option("--tag", "-t", metavar="TAG", help="Replaces the tags (repeatable)."),
    ] = None,
    mem_state: Annotated[
        State | None,
        typer.Option("--state", help="active, archived (kept, left out of search) or deleted."),
    ] = None,
    importance: Annotated[
        float | None, typer.Option(min=0.0, max=1.0, help="How much it matters.")
    ] = None,
) -> None:
    """Change a memory; new content is re-embedded and the old values go to its history."""
    fields: dict[str, Any] = {
        "content": None if content is None else read_text(content),
        "category": category,
        "tags": tag,
        "state": mem_state,
        "importance": importance,
    }
    if all(v is None for v in fields.values()):
        raise fail(
            ValidationError(
                "nothing to change: give --content, --category, --tag, --state or --importance"
            )
        )
    with service() as svc:
        before = svc.get(memory_id)
        memory = svc.update(before.id, **fields)
    said = "updated" if memory.version != before.version else "unchanged (the values are the same)"
    emit(memory.to_json(), lambda: console.print(f"[green]{said}[/green] {memory.id}"))


@app.command(rich_help_panel=MEMORIES)
def forget(memory_id: IdArg) -> None:
    """Delete a memory (soft: the row and its history are kept)."""
    with service() as svc:
        full_id = svc.resolve_id(memory_id, [svc.space_id])
        svc.delete(full_id)
    emit(
        {"status": "deleted", "id": full_id},
        lambda: console.print(f"[green]forgotten[/green] {full_id}"),
    )


@app.command(rich_help_panel=MEMORIES)
def history(memory_id: IdArg) -> None:
    """Every recorded change of a memory, oldest first."""
    from memoryd.store.rows import from_us

    with service() as svc:
        rows = svc.history(memory_id)
    for row in rows:
        row["at"] = format_ts(from_us(row["at"]))

    def human() -> None:
        for row in rows:
            console.print(f"[bold]{row['at']}[/bold] {row['action']}")
            if row["old"]:
                old = escape(json.dumps(row["old"], ensure_ascii=False))
                console.print(f"  [red]- {old}[/red]")
            console.print(
                f"  [green]+ {escape(json.dumps(row['new'], ensure_ascii=False))}[/green]"
            )

    emit(rows, human)


@app.command(rich_help_panel=MEMORIES)
def stats() -> None:
    """Counts by type, category, tier and state (deleted included); averages; the model."""
    with service() as svc:
        data = svc.stats()

    def human() -> None:
        summary = {k: v for k, v in data.items() if not isinstance(v, dict | list)}
        show_fields(summary)
        table = Table(header_style="bold")
        for column, justify in (("by", "left"), ("value", "left"), ("memories", "right")):
            table.add_column(column, justify=justify)  # type: ignore[arg-type]
        for key in ("by_type", "by_category", "by_tier", "by_state", "by_space", "by_agent"):
            counts: dict[str, int] = data.get(key) or {}
            for n, (name, count) in enumerate(counts.items()):
                group = key.removeprefix("by_") if n == 0 else ""
                table.add_row(group, escape(name or "(none)"), str(count))
            if counts:
                table.add_section()
        for n, day in enumerate(data.get("timeline") or []):
            table.add_row("created on" if n == 0 else "", day["date"], str(day["count"]))
        console.print(table)

    emit(data, human)


@app.command("delete-all", rich_help_panel=MEMORIES)
def delete_all(
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
) -> None:
    """Soft-delete every memory of this user and remove the raw conversation messages."""
    if not yes:
        if state.as_json or not console.is_terminal:
            raise fail(ValidationError("delete-all deletes every memory: pass --yes to confirm"))
        typer.confirm("Delete every memory (they stay readable by id, with history)?", abort=True)
    with service() as svc:
        result = svc.delete_all(confirm=True)
    emit(
        result,
        lambda: console.print(
            f"[green]deleted[/green] {result['deleted']} memories and "
            f"{result['sessions_cleared']} conversation messages"
        ),
    )
