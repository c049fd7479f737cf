"""The keyword options of the Python API, typed once for every client.

``Memory`` (embedded), ``AsyncMemory``, ``RemoteMemory`` and
``AsyncRemoteMemory`` take their search, list, ingest, add and import
options as ``**options: Unpack[...]`` of these: an editor completes them, a
type checker refuses a misspelt one, and each client passes them on as they
are. What all four share is the wire form (what the REST API takes too);
the embedded clients take a few more that only a process of its own can
honour. Tests hold each set to the signature it is passed to
(``MemoryService`` and the REST routes), so the two cannot drift.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Collection, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypedDict

from memoryd.errors import ValidationError

if TYPE_CHECKING:
    from memoryd.models import Relation
    from memoryd.retrieve.config import SearchConfig
    from memoryd.terms import Category, MemoryType, State, Tier


class SearchOptions(TypedDict, total=False):
    """A search's options, embedded or remote (``GET /v1/memories/search``)."""

    limit: int
    min_score: float | None
    min_similarity: float | None
    include_trace: bool
    spaces: str | Sequence[str] | None  # "all", or space ids
    scope: str | None
    tags: Any  # the memory carries all of them
    source: str | None
    agent_id: str | None
    category: str | Category | None
    memory_type: str | MemoryType | None
    session_id: str | None
    exclude_session: str | None  # the conversation recalled for: its turns left out
    include_tool_output: bool
    as_of: datetime | str | None


class EmbeddedSearchOptions(SearchOptions, total=False):
    """What an embedded search takes besides: its own clock, recipe and bookkeeping."""

    created_after: datetime | str | None
    created_before: datetime | str | None
    now: datetime | str | None
    config: SearchConfig
    touch: bool  # count the hits as recalled (their access count and trust)


class ListFilters(TypedDict, total=False):
    """A listing's filters and page, embedded or remote (``GET /v1/memories``)."""

    limit: int
    offset: int
    sort: str
    order: str
    memory_type: str | MemoryType | None
    state: str | State | None
    category: str | Category | None
    tier: str | Tier | None
    tags: Any
    scope: str | None
    current: bool  # only what holds now


class EmbeddedListFilters(ListFilters, total=False):
    session_id: str | None
    agent_id: str | None
    space_id: str | None


class IngestOptions(TypedDict, total=False):
    """An ingest's options besides its messages (``mode``, ``dates``: named parameters)."""

    session_id: str | None
    agent_id: str | None
    tags: Any
    source: str | None


class EmbeddedIngestOptions(IngestOptions, total=False):
    defer_embedding: bool  # return once durable; the vectors follow


class AddFields(TypedDict, total=False):
    """A direct memory's fields besides its content, embedded or remote
    (``POST /v1/memories`` with ``content``)."""

    category: Category | str | None
    tier: Tier | str | None
    tags: Any
    source: str | None
    scope: str | None
    agent_id: str | None
    session_id: str | None
    importance: float | None
    confidence: float | None
    key: str | None
    valid_from: datetime | str | None
    valid_to: datetime | str | None
    expires_at: datetime | str | None
    replaces: str | None  # the id of the memory this one replaces
    l2_content: str | None  # the full text behind the content, when more


class EmbeddedAddFields(AddFields, total=False):
    """What an embedded add takes besides: the memory's type, its summaries, its links."""

    memory_type: MemoryType | str | None
    marks: list[str] | None  # memoryd's own bookkeeping, beside the tags
    l0_abstract: str
    l1_overview: str
    relations: list[Relation] | None


class ImportOptions(TypedDict, total=False):
    """A file import's options (``POST /v1/imports``)."""

    file_type: str
    strategy: str
    post_process: bool
    force: bool
    agent_id: str | None
    space_id: str | None


class EmbeddedImportOptions(ImportOptions, total=False):
    tags: Any
    source: str | None


def check_options(
    what: str, options: Mapping[str, Any], allowed: Callable[..., Any] | Collection[str]
) -> None:
    """Unknown keyword arguments are a ValidationError naming the ones that exist: a caller
    without a type checker learns of a misspelt option, and a remote one of an option only
    an embedded store takes, instead of its being ignored. ``allowed``: the option names, or
    the function they are passed to."""
    if callable(allowed):
        params = inspect.signature(allowed).parameters
        if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
            return
        names = frozenset(n for n, p in params.items() if p.kind is not p.POSITIONAL_ONLY)
    else:
        names = frozenset(allowed)
    unknown = sorted(set(options) - names)
    if unknown:
        raise ValidationError(
            f"{what}() got unknown option(s) {', '.join(unknown)}; "
            f"it takes {', '.join(sorted(names))}"
        )
