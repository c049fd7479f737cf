"""Memory providers: the base class, the registry, and the built-in ``local`` and ``remote``."""

from memoryd.agents.providers.base import (
    MemoryHit,
    MemoryProvider,
    ProviderContext,
    UnsupportedError,
)
from memoryd.agents.providers.registry import (
    ENTRY_POINT_GROUP,
    ProviderUnavailableError,
    UnknownProviderError,
    available_providers,
    create_provider,
    register_provider,
    unregister_provider,
)

__all__ = [
    "ENTRY_POINT_GROUP",
    "MemoryHit",
    "MemoryProvider",
    "ProviderContext",
    "ProviderUnavailableError",
    "UnknownProviderError",
    "UnsupportedError",
    "available_providers",
    "create_provider",
    "register_provider",
    "unregister_provider",
]
