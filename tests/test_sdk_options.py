"""The Python API's typed options hold to what each door passes them to.

The embedded sets are the keyword parameters of the ``MemoryService`` method
they are handed to; the sets every client shares are what the REST route
takes (in the names the remote client sends them under). A new parameter on
either side that the options do not name, or an option no door takes, fails
here.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import pytest

from memoryd import options
from memoryd.imports.service import Imports
from memoryd.sdk import _ADD_FIELDS
from memoryd.server.routes.memories import list_memories, search_memories
from memoryd.server.schemas import MemoryCreate
from memoryd.service import MemoryService

# the remote client's names for two search options (memoryd.client.Calls.search)
SENT_AS = {"spaces": "space", "tags": "filter_tags"}
# the REST import form's fields (memoryd.server.routes.imports.create_import)
IMPORT_FORM = {"file_type", "strategy", "post_process", "force", "agent_id", "space_id"}


def keywords(method: Callable[..., Any], *besides: str) -> set[str]:
    params = inspect.signature(method).parameters.values()
    return {p.name for p in params if p.kind is p.KEYWORD_ONLY} - set(besides)


@pytest.mark.parametrize(
    ("typed", "method", "besides"),
    [
        (options.EmbeddedSearchOptions, MemoryService.search, ()),
        (options.EmbeddedListFilters, MemoryService.list_memories, ()),
        (options.EmbeddedIngestOptions, MemoryService.ingest, ("mode", "dates")),
        (options.EmbeddedImportOptions, Imports.create, ()),
    ],
)
def test_embedded_options_are_the_service_parameters(
    typed: type, method: Callable[..., Any], besides: tuple[str, ...]
) -> None:
    assert set(typed.__optional_keys__) == keywords(method, *besides)


def test_embedded_add_fields_are_what_add_takes() -> None:
    assert set(options.EmbeddedAddFields.__optional_keys__) == set(_ADD_FIELDS)


def test_shared_options_are_what_rest_takes() -> None:
    search = set(inspect.signature(search_memories).parameters)
    sent = {SENT_AS.get(k, k) for k in options.SearchOptions.__optional_keys__}
    assert sent <= search, sent - search
    listing = set(inspect.signature(list_memories).parameters)
    assert set(options.ListFilters.__optional_keys__) <= listing
    body = set(MemoryCreate.model_fields)
    assert set(options.AddFields.__optional_keys__) <= body
    assert set(options.IngestOptions.__optional_keys__) <= body
    assert set(options.ImportOptions.__optional_keys__) == IMPORT_FORM


def test_every_embedded_set_extends_the_shared_one() -> None:
    for shared, embedded in (
        (options.SearchOptions, options.EmbeddedSearchOptions),
        (options.ListFilters, options.EmbeddedListFilters),
        (options.IngestOptions, options.EmbeddedIngestOptions),
        (options.AddFields, options.EmbeddedAddFields),
        (options.ImportOptions, options.EmbeddedImportOptions),
    ):
        assert shared.__optional_keys__ < embedded.__optional_keys__
