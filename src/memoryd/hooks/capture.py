"""Stop and PreCompact: the recent conversation to smart ingest, before it is gone.

Stop runs after every reply, PreCompact right before Claude Code replaces
the conversation with a summary; both send the last turns of the transcript
(seed 000 §3.1 limits) and never answer anything: an output from these
hooks could keep Claude going or hold up the compaction. Against a server
the extraction runs there; embedded it runs here, within the hook's wait,
and what is left is handed to a background process (``hooks.runner``).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from memoryd.hooks.backend import HookBackend
from memoryd.hooks.config import HookConfig
from memoryd.hooks.output import HookResult
from memoryd.text.transcript import (
    MIN_TURNS,
    PRE_COMPACT_TURNS,
    STOP_TURNS,
    Turn,
    inline_turns,
    recent_turns,
)

log = logging.getLogger(__name__)

STOP_TAGS = ["auto-captured", "claude-code"]
PRE_COMPACT_TAGS = ["pre-compact", "claude-code"]


def turns_of(payload: Mapping[str, Any], limit: int) -> list[Turn]:
    """The transcript file's last turns; the payload's own messages when there is no file."""
    path = payload.get("transcript_path")
    if isinstance(path, str) and path.strip():
        try:
            return recent_turns(Path(path).expanduser(), limit)
        except OSError as exc:
            log.warning("cannot read the transcript %s: %s", path, exc)
    return inline_turns(payload, limit)


def capture(
    name: str,
    payload: Mapping[str, Any],
    backend: HookBackend,
    config: HookConfig,
    *,
    limit: int,
    tags: list[str],
) -> HookResult:
    turns = turns_of(payload, limit)
    if len(turns) < MIN_TURNS:
        log.info("%s: %d turn(s) in the transcript, nothing to capture", name, len(turns))
        return HookResult()
    session = payload.get("session_id")
    captured = backend.capture(
        [t.message() for t in turns],
        session_id=session if isinstance(session, str) and session else None,
        tags=tags,
        wait_s=config.ingest_wait_s,
    )
    log.info(
        "%s: %d turns sent (%d new) to %s, task %s %s",
        name,
        len(turns),
        captured.stored_count,
        backend.describe,
        captured.task_id,
        captured.status,
    )
    return HookResult(pending_task=captured.task_id if captured.pending else None)


def stop(payload: Mapping[str, Any], backend: HookBackend, config: HookConfig) -> HookResult:
    return capture("stop", payload, backend, config, limit=STOP_TURNS, tags=STOP_TAGS)


def pre_compact(payload: Mapping[str, Any], backend: HookBackend, config: HookConfig) -> HookResult:
    return capture(
        "pre-compact", payload, backend, config, limit=PRE_COMPACT_TURNS, tags=PRE_COMPACT_TAGS
    )
