"""``memoryd context …``: the context engine from a shell (bootstrap, assemble, grep, expand …).

The same operations as ``/v1/context/...`` on this home's store: tables and
lines for a person, and with ``--json`` (as every command) what the REST
routes answer.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from memoryd.cli.app import DATA, app, console, emit, service

if TYPE_CHECKING:
    from memoryd.context import ContextEngine
    from memoryd.service import MemoryService

context_app = typer.Typer(
    name="context",
    help="The context engine: one long conversation within a token budget, nothing lost.",
    no_args_is_help=True,
)
app.add_typer(context_app, name="context", rich_help_panel=DATA)
Conversation = Annotated[str, typer.Argument(help="The conversation id.")]
Budget = Annotated[int, typer.Option("--budget", help="Token budget of the context.")]


def _engine(svc: MemoryService) -> ContextEngine:
    from memoryd.context import ContextEngine  # loaded by the context commands alone

    return ContextEngine(svc)


def _print(data: Any, human: Callable[[], None] | None = None) -> None:
    emit(data, human or (lambda: console.print_json(json.dumps(data, ensure_ascii=False))))


def _table(columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
    table = Table(header_style="bold")
    for column in columns:
        table.add_column(column, overflow="fold")
    for row in rows:
        table.add_row(*(escape("" if v is None else str(v)) for v in row))
    console.print(table)


def _report(data: dict[str, Any]) -> None:
    """An after-turn or compaction report as one line."""
    if data.get("error"):
        console.print(f"[yellow]compaction deferred[/yellow]: {escape(str(data['error']))}")
    elif data.get("compacted"):
        console.print(
            f"compacted: {len(data['summaries'])} summaries, "
            f"{data['tokens_before']} → {data['tokens_after']} tokens"
        )
    else:
        console.print(f"nothing to compact ({data['tokens_before']} tokens)")


@context_app.command("list")
def list_conversations() -> None:
    """The conversations of this user, newest first."""
    with service() as svc:
        found = _engine(svc).list_conversations()
    _print(
        {"conversations": found},
        lambda: _table(
            ("conversation", "title", "agent", "updated", "messages", "summaries"),
            (
                (
                    c["conversation_id"],
                    c["title"],
                    c["agent_id"],
                    c["updated_at"][:16].replace("T", " "),
                    c["messages"],
                    c["summaries"],
                )
                for c in found
            ),
        ),
    )


@context_app.command("show")
def show(conversation: Conversation) -> None:
    """A conversation's counts and its context items (what stands for what)."""
    with service() as svc:
        found = _engine(svc).conversation(conversation)

    def human() -> None:
        items = found["context_items"]
        summaries = sum(1 for i in items if i["kind"] == "summary")
        console.print(
            f"{escape(found['conversation_id'])}: {found['messages']} messages; in context "
            f"{len(items) - summaries} of them and {summaries} summaries; updated "
            f"{found['updated_at'][:16].replace('T', ' ')}"
        )
        _table(("kind", "id"), ((i["kind"], i["id"]) for i in found["context_items"]))

    _print(found, human)


@context_app.command("ingest")
def ingest(
    conversation: Conversation,
    content: Annotated[str, typer.Argument(help="The message text.")],
    role: Annotated[str, typer.Option(help="Who said it.")] = "user",
    message_id: Annotated[str | None, typer.Option("--id", help="The host's message id.")] = None,
) -> None:
    """Add one message (a resent one, same id or content, is skipped)."""
    message: dict[str, Any] = {"role": role, "content": content}
    if message_id:
        message["id"] = message_id
    with service() as svc:
        done = _engine(svc).ingest(conversation, message).to_json()
    _print(done, lambda: console.print(f"stored {done['stored']}, {done['duplicates']} repeated"))


@context_app.command("bootstrap")
def bootstrap(
    conversation: Conversation,
    transcript: Annotated[Path, typer.Argument(exists=True, dir_okay=False)],
    format: Annotated[
        str | None, typer.Option(help="claude-code, openclaw or json (default: detected).")
    ] = None,
) -> None:
    """Rebuild a conversation from a transcript file; running it again changes nothing."""
    with service() as svc:
        done = _engine(svc).bootstrap(conversation, transcript, format=format)
    _print(
        done,
        lambda: console.print(
            f"read as {done['format']}: stored {done['stored']}, {done['duplicates']} already held"
        ),
    )


@context_app.command("assemble")
def assemble(
    conversation: Conversation,
    budget: Budget = 4000,
    query: Annotated[str | None, typer.Option(help="Recall for this (default: last 3).")] = None,
) -> None:
    """The messages to send now, within the budget."""
    with service() as svc:
        built = _engine(svc).assemble(conversation, budget, query).to_json()

    def human() -> None:
        _table(("role", "content"), ((m["role"], m["content"]) for m in built["messages"]))
        console.print(
            f"{built['estimated_tokens']} of {built['budget_tokens']} tokens, "
            f"{built['summaries']} summaries, {built['dropped']} left out"
        )

    _print(built, human)


@context_app.command("after-turn")
def after_turn(conversation: Conversation, budget: Budget = 4000) -> None:
    """Compact if the context passed 75% of the budget."""
    with service() as svc:
        done = _engine(svc).after_turn(conversation, budget).to_json()
    _print(done, lambda: _report(done))


@context_app.command("compact")
def compact(conversation: Conversation) -> None:
    """Compact everything but the fresh tail now."""
    with service() as svc:
        done = _engine(svc).compact(conversation).to_json()
    _print(done, lambda: _report(done))


@context_app.command("grep")
def grep(
    conversation: Conversation,
    query: Annotated[str, typer.Argument()],
    limit: Annotated[int, typer.Option(help="The most hits to show.")] = 20,
) -> None:
    """lcm_grep: exact and full-text matches in the conversation, with ids."""
    with service() as svc:
        hits = [h.to_json() for h in _engine(svc).grep(conversation, query, limit)]
    _print(
        {"hits": hits},
        lambda: _table(
            ("id", "kind", "role", "snippet"),
            ((h["id"], h["kind"], h["role"], h["snippet"]) for h in hits),
        ),
    )


@context_app.command("expand")
def expand(
    conversation: Conversation,
    summary_id: Annotated[str | None, typer.Option("--summary", help="A summary id.")] = None,
    query: Annotated[str | None, typer.Option(help="Expand the best matches instead.")] = None,
) -> None:
    """lcm_expand_query: a summary (or a query's matches) back to its exact messages."""
    with service() as svc:
        found = _engine(svc).expand(conversation, summary_id, query)
    _print(
        found,
        lambda: _table(
            ("id", "role", "content"),
            ((m["id"], m["role"], m["content"]) for m in found["messages"]),
        ),
    )
