"""A JSON body checked once, at the edge, before any route reads it.

Every route takes JSON its own way (a Pydantic model, a plain dict handed to
a capability, a transcript walked by a parser), and each would meet the same
two hazards deep inside: nesting so deep that a recursive walk overflows the
stack (``RecursionError``: a 500), and text that no store can hold (a lone
surrogate such as ``"\\ud800"``, valid JSON but not UTF-8: a
``UnicodeEncodeError`` at the first write). Both are the client's mistake,
so both are a 400 here, for every route and every setting alike.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable

from starlette.types import Message

from memoryd.wellformed import TOO_DEEP, problem


def json_problem(body: bytes) -> tuple[int, str] | None:
    """The status and message that refuse ``body``, or None (malformed JSON is left to
    the route, which says where it breaks). Too deep is a 400, as unreadable JSON is; text
    no store can hold is a 422, as any other bad value of a body is."""
    try:
        value = json.loads(body)
    except RecursionError:
        return 400, f"the JSON body is {TOO_DEEP}"
    except ValueError:
        return None
    found = problem(value)
    if found is None:
        return None
    return (400 if found == TOO_DEEP else 422), f"the JSON body: {found}"


async def read_body(receive: Callable[[], Awaitable[Message]]) -> bytes:
    """The whole request body (its size and pace bounded by ``receive``)."""
    parts: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        parts.append(message.get("body", b""))
        if not message.get("more_body", False):
            break
    return b"".join(parts)


def replay(
    body: bytes, receive: Callable[[], Awaitable[Message]]
) -> Callable[[], Awaitable[Message]]:
    """A ``receive`` that hands the read body over once, then waits as ``receive`` does."""
    sent = False

    async def again() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return again
