"""The one small base class every memory provider implements.

A provider is where an agent's memories live: memoryd embedded in the
process (``local``), a memoryd server (``remote``), or another system behind
an adapter. The :class:`~memoryd.agents.MemoryManager` calls it at the
lifecycle points and never looks behind it, so an agent switches stores by
changing one setting.

Five methods are required; the rest have defaults that say plainly what a
provider does not do (:class:`UnsupportedError`), so a caller never mistakes
"not offered" for "nothing found".
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, ClassVar

from memoryd.embed import Embedder
from memoryd.errors import MemorydError
from memoryd.models import Category

# how long flushing waits for one piece of pending work (an extraction) before giving up on it
FLUSH_TIMEOUT_S = 60.0


class UnsupportedError(MemorydError):
    """The provider does not offer this operation."""

    code = "unsupported"
    prefix = "unsupported"
    http_status = 400


@dataclass(frozen=True)
class MemoryHit:
    """One recalled memory, whatever store it came from."""

    id: str
    content: str
    score: float = 0.0
    category: Category = Category.PREFERENCES
    created_at: datetime | None = None
    similarity: float | None = None  # cosine to the query, where the store knows it
    session_id: str | None = None
    turn: bool = False  # a raw conversation turn, not a distilled or stated memory

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "content": self.content,
            "score": round(self.score, 4),
            "category": self.category.value,
            "created_at": self.created_at.isoformat() if self.created_at else None,
        }


@dataclass(frozen=True)
class ProviderContext:
    """What a provider is built with: its profile's home and its own options."""

    home: Path
    profile: str | None = None
    options: dict[str, Any] = field(default_factory=dict)
    embedder: Embedder | None = None  # the local model to share, where a provider embeds


class MemoryProvider(ABC):
    """A store of an agent's memories. Subclass, set ``name``, and register it."""

    name: ClassVar[str] = ""
    # the modules the provider imports, and the memoryd extra that installs them
    requires: ClassVar[tuple[str, ...]] = ()
    extra: ClassVar[str | None] = None

    def __init__(self, context: ProviderContext) -> None:
        self.context = context

    @abstractmethod
    def search(self, query: str, *, limit: int) -> list[MemoryHit]:
        """The memories most relevant to ``query``, best first."""

    @abstractmethod
    def remember(
        self, content: str, *, tags: Sequence[str] = (), replaces: str | None = None
    ) -> MemoryHit:
        """Store a fact now (``replaces``: the id of the memory it changes)."""

    @abstractmethod
    def forget(self, memory_id: str) -> None:
        """Remove a memory from recall."""

    @abstractmethod
    def capture(self, messages: Sequence[dict[str, str]], *, session_id: str) -> None:
        """Keep a conversation's messages durably and distil memories from them.

        When this returns, the messages are stored; the distilling may go on
        in the background until :meth:`flush`.
        """

    def flush(self, timeout_s: float = FLUSH_TIMEOUT_S) -> None:
        """Wait for background work (extraction) started by :meth:`capture`."""
        return None  # a provider that stores synchronously has nothing to wait for

    def reflect(self, query: str, *, limit: int) -> Any:
        """A store's own synthesis across memories; unsupported by default.

        The manager then synthesises one itself from :meth:`search`
        (:mod:`memoryd.agents.reflect`).
        """
        raise UnsupportedError(f"provider {self.name!r} has no reflect of its own")

    def consolidate(self, *, timeout_s: float = FLUSH_TIMEOUT_S) -> dict[str, Any]:
        """Merge duplicates and resolve contradictions, with history."""
        raise UnsupportedError(f"provider {self.name!r} does not consolidate")

    def history(self, memory_id: str) -> list[dict[str, Any]]:
        raise UnsupportedError(f"provider {self.name!r} keeps no history")

    def close(self) -> None:
        """Release what the provider holds (files, connections); flush first."""
        return None
