"""Ids as people type them: any unique prefix of a full id, as git takes commit hashes.

Tables and messages show the first 8 characters of an id; those (or any
longer start) name the memory, task or import as well as the full id does.
A prefix two ids share is an error that lists them, so nothing is ever
changed on a guess.
"""

from __future__ import annotations

from collections.abc import Callable

from memoryd.errors import NotFoundError, ValidationError

# shorter starts are too likely to be typos of another id (git's minimum too)
MIN_PREFIX = 4
SHOWN_CANDIDATES = 5
SHORT_ID = 8

# finds the ids that start with a prefix, at most ``limit`` of them, in order
Finder = Callable[[str, int], list[str]]


def resolve_id(kind: str, given: object, find: Finder) -> str:
    """The one id that is ``given`` or starts with it; NotFound or a list of candidates."""
    # the validators load pydantic: a table that only shortens ids does not need them
    from memoryd.validate import check_id

    given = check_id(given)
    found = find(given, SHOWN_CANDIDATES + 1)
    if given in found:
        return given
    if len(given) < MIN_PREFIX:
        raise NotFoundError(f"{kind} {given} (an id prefix needs at least {MIN_PREFIX} characters)")
    if not found:
        raise NotFoundError(f"{kind} {given}")
    if len(found) == 1:
        return found[0]
    shown = ", ".join(found[:SHOWN_CANDIDATES])
    more = " and more" if len(found) > SHOWN_CANDIDATES else ""
    raise ValidationError(
        f"{kind} id prefix {given!r} is ambiguous: it matches {shown}{more}; give more characters"
    )


def short(full_id: str) -> str:
    """The start of an id that tables show (and that the commands accept back)."""
    return full_id[:SHORT_ID]
