"""SessionStart: the last checkpoint, the profile and the latest memories, at every start.

At startup, resume, clear and compaction alike, the newest checkpoint of
this agent in this project (the working directory) comes first, so the
session picks up where the last one left off (``memoryd.continuity``), and
the recalled memories fill what is left of Claude Code's context limit.

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
from memoryd.inject import MAX_CONTEXT_CHARS, estimate_tokens, render_context
from memoryd.models import Memory as MemoryRecord
from memoryd.profile import holds_for_user

log = logging.getLogger(__name__)

EVENT = "SessionStart"
# ourmem's SessionStart lists the newest 20; the profile carries the important stable facts
RECENT_LIMIT = 20


def run(payload: Mapping[str, Any], backend: HookBackend, config: HookConfig) -> HookResult:
    profile = attempt("profile", backend.profile, None)
    none: list[MemoryRecord] = []
    recent = attempt("recent memories", lambda: backend.recent(RECENT_LIMIT), none)
    recent = [m for m in recent if holds_for_user(m)]  # as the profile beside it lists
    cwd = payload.get("cwd")
    project = cwd if isinstance(cwd, str) else ""
    restored = attempt("checkpoint", lambda: backend.restore(config.agent_id, project), "")
    room = MAX_CONTEXT_CHARS - len(restored) - 1
    text = render_context(
        recent, profile=profile, budget_tokens=config.session_tokens, max_chars=room
    )
    log.info(
        "session-start (%s): checkpoint %s, %d recent memories, profile %s, injected %d tokens",
        payload.get("source") or "?",
        "restored" if restored else "none",
        len(recent),
        "yes" if profile else "no",
        estimate_tokens(restored) + estimate_tokens(text),
    )
    return HookResult(context_output(EVENT, "\n".join(t for t in (restored, text) if t)))
