"""``memoryd context …``: the context engine from a shell (bootstrap, assemble, grep, expand …).

The same operations as ``/v1/context/...`` on this home's store; ``--json``
prints what the REST routes answer.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

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


def _print(data: Any) -> None:
    emit(data, lambda: console.print_json(json.dumps(data, ensure_ascii=False)))


@context_app.command("list")
def list_conversations() -> None:
    """The conversations of this user, newest first."""
    with service() as svc:
        _print({"conversations": _engine(svc).list_conversations()})


@context_app.command("show")
def show(conversation: Conversation) -> None:
    """A conversation's counts and its context items (what stands for what)."""
    with service() as svc:
        _print(_engine(svc).conversation(conversation))


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
        _print(_engine(svc).ingest(conversation, message).to_json())


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
        _print(_engine(svc).bootstrap(conversation, transcript, format=format))


@context_app.command("assemble")
def assemble(
    conversation: Conversation,
    budget: Budget = 4000,
    query: Annotated[str | None, typer.Option(help="Recall for this (default: last 3).")] = None,
) -> None:
    """The messages to send now, within the budget."""
    with service() as svc:
        _print(_engine(svc).assemble(conversation, budget, query).to_json())


@context_app.command("after-turn")
def after_turn(conversation: Conversation, budget: Budget = 4000) -> None:
    """Compact if the context passed 75% of the budget."""
    with service() as svc:
        _print(_engine(svc).after_turn(conversation, budget).to_json())


@context_app.command("compact")
def compact(conversation: Conversation) -> None:
    """Compact everything but the fresh tail now."""
    with service() as svc:
        _print(_engine(svc).compact(conversation).to_json())


@context_app.command("grep")
def grep(
    conversation: Conversation,
    query: Annotated[str, typer.Argument()],
    limit: Annotated[int, typer.Option(help="The most hits to show.")] = 20,
) -> None:
    """lcm_grep: exact and full-text matches in the conversation, with ids."""
    with service() as svc:
        hits = _engine(svc).grep(conversation, query, limit)
        _print({"hits": [h.to_json() for h in hits]})


@context_app.command("expand")
def expand(
    conversation: Conversation,
    summary_id: Annotated[str | None, typer.Option("--summary", help="A summary id.")] = None,
    query: Annotated[str | None, typer.Option(help="Expand the best matches instead.")] = None,
) -> None:
    """lcm_expand_query: a summary (or a query's matches) back to its exact messages."""
    with service() as svc:
        _print(_engine(svc).expand(conversation, summary_id, query))
