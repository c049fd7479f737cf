"""One request of the remote clients: what to send, and how its answer becomes a result.

The sync and asyncio clients (:mod:`memoryd.client`, :mod:`memoryd.aio`) and the task
calls (:mod:`memoryd.client_tasks`) describe each method as one of these, so a method's
path, options and parsing are written once for both transports.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

R = TypeVar("R")


@dataclass
class Call(Generic[R]):
    """One request, and how its answer becomes the method's result."""

    method: str
    path: str
    parse: Callable[[Any], R]
    options: dict[str, Any] = field(default_factory=dict)
    # parse takes (answer, HTTP status): where the status says something (201: created)
    with_status: bool = False
