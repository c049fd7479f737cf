"""How a stored value reads on a dashboard page: the templates' ``shown`` and ``when``.

memoryd stores every time in UTC; a person reads times in their own zone.
The server cannot know that zone, so each time is written as a ``<time>``
element holding the UTC instant (``datetime="…Z"``) and, as its text, the
UTC date and time said as such; the dashboard's script rewrites the text to
the reader's local date and time (``static/dashboard.js``). A page read
without the script still says which zone its times are in.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from enum import Enum
from typing import Any

from markupsafe import Markup

from memoryd.store.rows import from_us

_ISO_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d")
MINUTES = "%Y-%m-%d %H:%M"
SECONDS = "%Y-%m-%d %H:%M:%S"


def local_time(value: datetime, seconds: bool = False) -> Markup:
    """A ``<time>`` the script shows in the reader's zone (``data-seconds``: to the second,
    where order within a minute matters, as in a memory's history)."""
    at = value.astimezone(UTC) if value.tzinfo else value.replace(tzinfo=UTC)
    shape = SECONDS if seconds else MINUTES
    precision = " data-seconds" if seconds else ""
    return Markup('<time datetime="{}"{}>{} UTC</time>').format(
        at.strftime("%Y-%m-%dT%H:%M:%SZ"), Markup(precision), at.strftime(shape)
    )


def when(us: int | None) -> Markup:
    """A time stored as microseconds since the epoch, to the second; empty when unknown."""
    return local_time(from_us(us), seconds=True) if us else Markup("")


def shown(value: Any) -> str:
    """A field's value as a person reads it: no float's binary tail, no ``None``, an
    enum by its name, a time to the minute in the reader's zone."""
    if value is None or value == "" or value == []:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.2f}"
    if isinstance(value, datetime):
        return local_time(value)
    if isinstance(value, str) and _ISO_TIME.match(value):  # a time in the API's shape
        try:
            return local_time(datetime.fromisoformat(value))
        except ValueError:
            return value[:16].replace("T", " ")
    if isinstance(value, Enum):
        return str(value.value)
    if isinstance(value, list):
        return Markup(", ").join(shown(v) for v in value)
    return str(value)
