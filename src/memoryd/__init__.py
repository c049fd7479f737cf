"""memoryd: long-term memory for AI agents."""

from memoryd.aio import AsyncMemory, AsyncRemoteMemory
from memoryd.client import RemoteMemory
from memoryd.context import ContextEngine
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
from memoryd.models import Memory as MemoryRecord
from memoryd.models import ScoredMemory
from memoryd.sdk import Memory
from memoryd.service import MemoryService

__version__ = "0.1.0"
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
