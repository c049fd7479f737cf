"""memoryd: long-term memory for AI agents.

The public names load on first use (PEP 562), so a command that never
embeds or searches (``memoryd list``, a hook's argument parsing) does not
pay for the SDK, the server client and numpy at start.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from memoryd.errors import (
    EmbeddingError,
    EmbeddingMismatchError,
    MemorydError,
    NotFoundError,
    PayloadTooLargeError,
    StorageDamagedError,
    StorageError,
    ValidationError,
)

if TYPE_CHECKING:
    from memoryd.aio import AsyncMemory, AsyncRemoteMemory
    from memoryd.client import RemoteMemory
    from memoryd.context import ContextEngine
    from memoryd.models import Memory as MemoryRecord
    from memoryd.models import ScoredMemory
    from memoryd.sdk import Memory
    from memoryd.service import MemoryService

__version__ = "0.1.0"
# public name -> (module, attribute)
_LAZY: dict[str, tuple[str, str]] = {
    "AsyncMemory": ("memoryd.aio", "AsyncMemory"),
    "AsyncRemoteMemory": ("memoryd.aio", "AsyncRemoteMemory"),
    "ContextEngine": ("memoryd.context", "ContextEngine"),
    "Memory": ("memoryd.sdk", "Memory"),
    "MemoryRecord": ("memoryd.models", "Memory"),
    "MemoryService": ("memoryd.service", "MemoryService"),
    "RemoteMemory": ("memoryd.client", "RemoteMemory"),
    "ScoredMemory": ("memoryd.models", "ScoredMemory"),
}
__all__ = [
    "AsyncMemory",
    "AsyncRemoteMemory",
    "ContextEngine",
    "EmbeddingError",
    "EmbeddingMismatchError",
    "Memory",
    "MemoryRecord",
    "MemoryService",
    "MemorydError",
    "NotFoundError",
    "PayloadTooLargeError",
    "RemoteMemory",
    "ScoredMemory",
    "StorageDamagedError",
    "StorageError",
    "ValidationError",
]


def __getattr__(name: str) -> Any:
    target = _LAZY.get(name)
    if target is None:
        raise AttributeError(f"module 'memoryd' has no attribute {name!r}")
    value = getattr(importlib.import_module(target[0]), target[1])
    globals()[name] = value  # loaded once
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
