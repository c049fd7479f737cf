"""Memory for Python agents: lifecycle hooks, providers, the memory tool, reflection.

``MemoryManager`` is what an agent loop calls; providers are where the
memories live (``local`` by default); :mod:`memoryd.agents.tool` is the
memory tool in the OpenAI and Anthropic formats; the framework adapters
live in :mod:`memoryd.agents.frameworks` (each needs its framework's extra).
"""

from memoryd.agents.aio import AsyncMemoryManager
from memoryd.agents.manager import MemoryManager, UndeliveredError
from memoryd.agents.providers import (
    ENTRY_POINT_GROUP,
    MemoryHit,
    MemoryProvider,
    ProviderContext,
    ProviderUnavailableError,
    UnknownProviderError,
    UnsupportedError,
    available_providers,
    create_provider,
    register_provider,
    unregister_provider,
)
from memoryd.agents.reflect import Reflection
from memoryd.agents.settings import AgentMemorySettings, profile_home
from memoryd.agents.tool import anthropic_tool, handle_tool_call, openai_tool

__all__ = [
    "ENTRY_POINT_GROUP",
    "AgentMemorySettings",
    "AsyncMemoryManager",
    "MemoryHit",
    "MemoryManager",
    "MemoryProvider",
    "ProviderContext",
    "ProviderUnavailableError",
    "Reflection",
    "UndeliveredError",
    "UnknownProviderError",
    "UnsupportedError",
    "anthropic_tool",
    "available_providers",
    "create_provider",
    "handle_tool_call",
    "openai_tool",
    "profile_home",
    "register_provider",
    "unregister_provider",
]
