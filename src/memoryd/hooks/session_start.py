"""SessionStart: the profile and the latest memories, at startup, resume, clear and compaction.

After a compaction Claude Code starts the session again with source
``compact``; the summary it keeps is lossy, so the same recall is injected
again and what memoryd knows survives the compaction.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from memoryd.hooks.backend import HookBackend
from memoryd.hooks.config import HookConfig
from memoryd.hooks.output import HookResult, attempt, context_output
from memoryd.inject import estimate_tokens, render_context
from memoryd.models import Memory as MemoryRecord

log = logging.getLogger(__name__)

EVENT = "SessionStart"
# ourmem's SessionStart lists the newest 20; the profile carries the important stable facts
RECENT_LIMIT = 20


def run(payload: Mapping[str, Any], backend: HookBackend, config: HookConfig) -> HookResult:
    profile = attempt("profile", backend.profile, None)
    none: list[MemoryRecord] = []
    recent = attempt("recent memories", lambda: backend.recent(RECENT_LIMIT), none)
    text = render_context(recent, profile=profile, budget_tokens=config.session_tokens)
    log.info(
        "session-start (%s): %d recent memories, profile %s, injected %d tokens",
        payload.get("source") or "?",
        len(recent),
        "yes" if profile else "no",
        estimate_tokens(text),
    )
    return HookResult(context_output(EVENT, text))
