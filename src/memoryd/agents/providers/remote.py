"""``remote``: a memoryd server, or any server that speaks the ourmem REST API.

Options (``settings.options``, or the ``MEMORYD_URL`` / ``MEMORYD_API_KEY``
variables the SDK reads): ``url``, ``api_key``, ``agent_id``, ``timeout_s``.
Each profile names its own key, so each is its own tenant on the server.
"""

from __future__ import annotations

from memoryd.agents.providers.base import ProviderContext
from memoryd.agents.providers.sdk import SdkProvider
from memoryd.client import DEFAULT_TIMEOUT_S, RemoteMemory
from memoryd.errors import ValidationError

OPTIONS = frozenset(("url", "api_key", "agent_id", "timeout_s"))


class RemoteProvider(SdkProvider):
    name = "remote"

    def __init__(self, context: ProviderContext) -> None:
        super().__init__(context)
        options = context.options
        unknown = sorted(set(options) - OPTIONS)
        if unknown:
            raise ValidationError(
                f"unknown option(s) {', '.join(unknown)} for the remote provider; "
                f"it takes {', '.join(sorted(OPTIONS))}"
            )
        self._start(
            RemoteMemory(
                options.get("url"),
                options.get("api_key"),
                agent_id=options.get("agent_id"),
                timeout=float(options.get("timeout_s", DEFAULT_TIMEOUT_S)),
            )
        )
