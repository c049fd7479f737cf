"""What the host tests share: one memoryd server for the whole run, a tenant per module.

Each real host (OpenClaw, OpenCode, the Claude Code CLI) is installed from the
registry at a pinned version (``tests/integrations/build_plugins.py``) and
talks to this server over HTTP as it would to any memoryd, with a tenant's key
of its own, so two hosts never see each other's memories.
"""

from __future__ import annotations

from dataclasses import dataclass

import httpx


@dataclass
class Tenant:
    """A tenant of the shared server: its URL, its key and a client holding the key."""

    url: str
    key: str
    http: httpx.Client
