"""The words memoryd's records speak: enums, marks, limits and times.

Pure Python, no pydantic: the command line names these in its options and
tables before it knows which command runs, and ``memoryd --help`` should not
pay for the models' validation machinery to list them
(:mod:`memoryd.models` builds the records on them and re-exports each).
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from memoryd.errors import ValidationError

# the largest integer an SQLite INTEGER column holds: a record with more cannot be stored
SQLITE_MAX_INT = 2**63 - 1
# the layers of a memory (seed 000 §1.2): a one-line index entry, a short overview, the body
MAX_L0_CHARS, MAX_L1_CHARS, MAX_L2_CHARS = 120, 300, 2000


# the mark of a conversation turn that is a tool's output (role tool, toolResult, …):
# kept, never embedded, and left out of search unless a search asks for it
TOOL_OUTPUT_MARK = "tool-output"
# what a statement is about (memoryd.ingest.attributes): "about:residence"; beside it,
# "about:other" for another person's fact, "about:plan" for a plan or wish, "about:past"
# for what held once, told as such, and "about:liking" for a liking beside others
ABOUT_PREFIX = "about:"
OTHER_MARK = "about:other"
PLAN_MARK = "about:plan"
PAST_MARK = "about:past"
LIKING_MARK = "about:liking"
# read, and about none of the attributes: not read again
NOTHING_MARK = "about:none"
# a statement so marked holds no value of its attribute that a newer one could replace
# a statement that names a value the user stated before, saying nothing of it changing
MENTION_MARK = "about:mention"
NOT_A_VALUE_MARKS = frozenset((OTHER_MARK, PLAN_MARK, PAST_MARK, LIKING_MARK, MENTION_MARK))

# the fields a listing sorts by
SORT_COLUMNS = ("created_at", "updated_at", "importance", "access_count")


class Category(StrEnum):
    PROFILE = "profile"
    PREFERENCES = "preferences"
    ENTITIES = "entities"
    EVENTS = "events"
    CASES = "cases"
    PATTERNS = "patterns"


class MemoryType(StrEnum):
    PINNED = "pinned"
    INSIGHT = "insight"
    SESSION = "session"


class State(StrEnum):
    ACTIVE = "active"
    ARCHIVED = "archived"
    DELETED = "deleted"


class Status(StrEnum):
    """Whether a memory holds now: one answer, computed here, for every door.

    ``state`` is what a user set (active, archived, deleted); ``status``
    adds what time did to an active memory: replaced by a newer value
    (``superseded``, the raw turns that said it included), past its validity
    (``ended``) or retention (``expired``), or valid only from a later date
    (``pending``). Only ``current`` memories are searched, injected, profiled
    and recalled; the others stay reachable through history and ``as_of``.
    """

    CURRENT = "current"
    SUPERSEDED = "superseded"
    ENDED = "ended"
    EXPIRED = "expired"
    PENDING = "pending"
    ARCHIVED = "archived"
    DELETED = "deleted"


class Tier(StrEnum):
    CORE = "core"
    WORKING = "working"
    PERIPHERAL = "peripheral"


class RelationType(StrEnum):
    SUPERSEDES = "supersedes"
    CONTEXTUALIZES = "contextualizes"
    SUPPORTS = "supports"
    CONTRADICTS = "contradicts"


class SpaceType(StrEnum):
    PERSONAL = "personal"
    TEAM = "team"
    ORGANIZATION = "organization"


def personal_space(tenant_id: str) -> str:
    """Every tenant's own space; its id names the tenant."""
    return f"personal/{tenant_id}"


def normalise_space_id(space_id: str) -> str:
    """``team:<uuid>`` (the legacy form some clients send) is ``team/<uuid>``."""
    for prefix in ("personal", "team", "org"):
        if space_id.startswith(prefix + ":"):
            return f"{prefix}/{space_id[len(prefix) + 1 :]}"
    return space_id


def utcnow() -> datetime:
    return datetime.now(UTC)


def new_id() -> str:
    return str(uuid.uuid4())


def to_utc(value: datetime) -> datetime:
    """Naive datetimes are taken as UTC, so a date without a zone never shifts."""
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    try:
        return value.astimezone(UTC)
    except OverflowError:  # year 1 at +14:00 is before the first representable UTC instant
        raise ValidationError(f"{value.isoformat()} is out of the representable range") from None


def lone_surrogate(value: Any) -> bool:
    """True when a string anywhere in ``value`` holds a lone surrogate.

    JSON may escape one (``"\\ud800"``) and Python decodes it, but no UTF-8
    text can hold it: the store, the hashes and every client would fail on it.
    """
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return True
        return False
    if isinstance(value, dict):
        return any(lone_surrogate(k) or lone_surrogate(v) for k, v in value.items())
    if isinstance(value, list | tuple):
        return any(lone_surrogate(v) for v in value)
    return False


def format_ts(value: datetime | None) -> str | None:
    """RFC 3339 with 6 fractional digits and ``+00:00``: what every client parses."""
    if value is None:
        return None
    return to_utc(value).isoformat(timespec="microseconds")


def parse_ts(value: str | datetime | None) -> datetime | None:
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        return to_utc(value)
    text = value.strip()
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    return to_utc(datetime.fromisoformat(text))


class Role(StrEnum):
    ADMIN = "admin"
    MEMBER = "member"
    READER = "reader"


class MemberStatus(StrEnum):
    """``invited`` until the user accepts: an invitation grants nothing."""

    ACTIVE = "active"
    INVITED = "invited"


def wire(value: Any) -> Any:
    """A record's value in the wire form: enums as values, times with 6 digits (a
    pydantic model is known by its declared fields, so this module needs no pydantic)."""
    fields = getattr(type(value), "model_fields", None)
    if isinstance(fields, dict):
        return {k: wire(getattr(value, k)) for k in fields}
    if isinstance(value, datetime):
        return format_ts(value)
    if isinstance(value, StrEnum):
        return value.value
    if isinstance(value, list | tuple):
        return [wire(v) for v in value]
    if isinstance(value, dict):
        return {k: wire(v) for k, v in value.items()}
    return value
