"""Checks every door applies to what a caller hands memoryd: ids, enums, content, times,
numbers, tags and relations, each with an error that names the field.

They sit below every layer (the store, the services, the doors), so each can
check its input the same way without reaching into the write path for it.
"""

from __future__ import annotations

from datetime import date, datetime, time
from typing import Any, TypeVar

from pydantic import ValidationError as PydanticValidationError

from memoryd.errors import ValidationError
from memoryd.models import (
    Category,
    MemoryType,
    Relation,
    State,
    Tier,
    lone_surrogate,
    parse_ts,
    to_utc,
)
from memoryd.privacy import redact

E = TypeVar("E", Category, MemoryType, State, Tier)

MAX_CONTENT_CHARS = 200_000
MAX_ID_CHARS = 200


def parse_enum(kind: type[E], value: E | str | None, default: E | None = None) -> E:
    """An enum from its value, case-insensitive, with the allowed values in the error."""
    if value is None or value == "":
        if default is None:
            raise ValidationError(f"{kind.__name__.lower()} is required")
        return default
    if isinstance(value, kind):
        return value
    try:
        return kind(str(value).strip().lower())
    except ValueError:
        allowed = ", ".join(m.value for m in kind)
        name = "memory state" if kind is State else kind.__name__.lower()
        raise ValidationError(f"unknown {name}: {value} (expected one of {allowed})") from None


def check_content(content: Any) -> str:
    if not isinstance(content, str):
        raise ValidationError("content must be a string")
    if not content.strip():
        raise ValidationError("content cannot be empty")
    if lone_surrogate(content):
        raise ValidationError("content is not valid Unicode text (it holds a lone surrogate)")
    if len(content) > MAX_CONTENT_CHARS:
        raise ValidationError(f"content is longer than {MAX_CONTENT_CHARS} characters")
    public = redact(content)
    if public is None:
        raise ValidationError(
            "content is entirely <private> or recalled context (a block such as "
            "<memoryd-context> or <omem-context>): nothing to remember"
        )
    return public


def check_id(memory_id: Any) -> str:
    if not isinstance(memory_id, str) or not memory_id.strip():
        raise ValidationError("memory id must be a non-empty string")
    if len(memory_id) > MAX_ID_CHARS or any(ch.isspace() for ch in memory_id):
        raise ValidationError(f"invalid memory id: {memory_id[:50]!r}")
    return memory_id


def check_time(name: str, value: Any) -> datetime | None:
    """A moment from a ``datetime``, a ``date`` (its midnight, UTC) or an ISO 8601 string.

    Callers of the SDK write ``as_of="2026-01-01"`` as often as they pass a
    datetime; naive values are UTC, as everywhere in memoryd.
    """
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        return to_utc(value)
    if isinstance(value, date):
        return to_utc(datetime.combine(value, time()))
    if isinstance(value, str):
        try:
            return parse_ts(value)
        except ValueError:
            raise ValidationError(
                f"{name} must be an ISO 8601 date or time (e.g. 2026-01-31 or "
                f"2026-01-31T09:30:00Z), got {value[:50]!r}"
            ) from None
    raise ValidationError(
        f"{name} must be a datetime or an ISO 8601 string, got {type(value).__name__}"
    )


# a memory's labels: enough for any real use, small enough to list and count
MAX_TAGS = 64
MAX_TAG_CHARS = 128


def check_int(name: str, value: Any, low: int, high: int) -> int:
    """An int in ``low..high``; a bool or a numeric string is a caller's mistake, not a number."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValidationError(f"{name} must be an integer, got {type(value).__name__} {value!r}")
    if not low <= value <= high:
        raise ValidationError(f"{name} must be between {low} and {high}, got {value}")
    return value


def check_unit(name: str, value: float | None, default: float) -> float:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValidationError(f"{name} must be a number between 0 and 1, got {value!r}")
    if not 0.0 <= float(value) <= 1.0:
        raise ValidationError(f"{name} must be between 0 and 1, got {value}")
    return float(value)


def check_tags(tags: Any, name: str = "tags", most: int | None = MAX_TAGS) -> list[str]:
    """Tags (or marks) as given, trimmed; a label each: at most ``most`` (a filter's own
    limit is the store's) of at most :data:`MAX_TAG_CHARS` characters (every listing and
    ``/v1/stats/tags`` shows them)."""
    if tags is None:
        return []
    if isinstance(tags, str):
        tags = [t for t in tags.split(",")]
    if not isinstance(tags, list | tuple) or not all(isinstance(t, str) for t in tags):
        raise ValidationError(f"{name} must be a list of strings")
    kept = list(dict.fromkeys(t.strip() for t in tags if t.strip()))
    if most is not None and len(kept) > most:
        raise ValidationError(f"{name}: at most {most}, got {len(kept)}")
    long = next((t for t in kept if len(t) > MAX_TAG_CHARS), None)
    if long is not None:
        raise ValidationError(
            f"{name}: each at most {MAX_TAG_CHARS} characters, got one of {len(long)}"
        )
    return kept


def first_problem(exc: PydanticValidationError) -> str:
    error = exc.errors()[0]
    where = ".".join(str(p) for p in error.get("loc", ())) or "value"
    return f"{where}: {error.get('msg')}"


def check_relations(value: Any) -> list[Relation]:
    if not isinstance(value, list | tuple):
        raise ValidationError("relations must be a list")
    try:
        return [r if isinstance(r, Relation) else Relation.model_validate(r) for r in value]
    except PydanticValidationError as exc:
        raise ValidationError(f"invalid relation: {first_problem(exc)}") from None
