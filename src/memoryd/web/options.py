"""How ``memoryd serve`` is bound and who it trusts: the part the CLI needs without FastAPI.

Kept apart from the app so that commands which only check an address (the
hooks, ``memoryd mcp``) start without importing the web framework.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from memoryd.errors import ValidationError

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8080


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@dataclass
class ServeOptions:
    host: str = DEFAULT_HOST
    no_auth: bool = False
    open_tenants: bool | None = None  # None: the settings' value, else open on loopback

    def check(self) -> None:
        if self.no_auth and not is_loopback(self.host):
            raise ValidationError(
                f"--no-auth is only allowed on a loopback address, not {self.host}: anyone "
                "who can reach the port would own every memory"
            )


# how ``memoryd serve`` hands its options to the app factory of each uvicorn worker
ENV_HOST = "MEMORYD_SERVE_HOST"
ENV_NO_AUTH = "MEMORYD_SERVE_NO_AUTH"
