"""``local``: memoryd embedded in the agent's process, on the profile's home (the default)."""

from __future__ import annotations

from memoryd.agents.providers.base import ProviderContext
from memoryd.agents.providers.sdk import SdkProvider
from memoryd.sdk import Memory


class LocalProvider(SdkProvider):
    """The profile's own database, model and task worker; no server, no network."""

    name = "local"

    def __init__(self, context: ProviderContext) -> None:
        super().__init__(context)
        self._start(Memory(context.home, embedder=context.embedder))
