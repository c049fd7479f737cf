"""Checkpoints from Claude Code: saved on Stop, PreCompact, SessionEnd and file edits.

Every hook is its own process, so nothing is kept in memory between them:
the session's events are read from the end of its transcript (the same
bounded backward read the capture hooks use), the conversation as
``transcript.entry_text`` sees it and the tool calls from the ``tool_use``
and ``tool_result`` blocks, and the session's previous checkpoint carries
what the tail no longer reaches (the first request, files written early).

PostToolUse saves only after a tool that writes a file
(``continuity.written_files``), with the call from the payload added,
since the transcript may not hold it yet. The mechanical checkpoint is
saved before anything else a hook does, so a hook cut short by its
deadline still leaves it; the LLM's summary, when one is configured, comes
last (Stop, PreCompact, SessionEnd, never after a tool call).
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from memoryd.continuity.mechanical import Event, Message, ToolResult, ToolUse, written_files
from memoryd.continuity.model import Owner, Trigger
from memoryd.hooks.backend import HookBackend
from memoryd.hooks.config import HookConfig
from memoryd.hooks.output import HookResult, attempt
from memoryd.models import parse_ts
from memoryd.text.transcript import MAX_ENTRY_BYTES, entry_text, lines_backwards

log = logging.getLogger(__name__)

Handler = Callable[[Mapping[str, Any], HookBackend, HookConfig], HookResult]
# the first request is near the start of the file; never read further forward than this
MAX_HEAD_BYTES = 4 * 1024 * 1024
# the tail a save reads: what is older is in the session's previous checkpoint already
MAX_TAIL_BYTES = 4 * 1024 * 1024


def owner_of(payload: Mapping[str, Any], config: HookConfig) -> Owner | None:
    session = payload.get("session_id")
    if not isinstance(session, str) or not session.strip():
        log.warning("checkpoint: the hook input has no session_id; nothing saved")
        return None
    cwd = payload.get("cwd")
    return Owner(config.agent_id, session, cwd if isinstance(cwd, str) else "")


def _entries(lines: Iterator[bytes]) -> Iterator[Mapping[str, Any]]:
    for raw in lines:
        if not raw.strip() or len(raw) > MAX_ENTRY_BYTES:
            continue
        try:
            entry = json.loads(raw)
        except ValueError:
            continue  # a line cut by a concurrent write
        if isinstance(entry, Mapping) and not entry.get("isSidechain"):
            yield entry


def entry_events(entry: Mapping[str, Any]) -> list[Event]:
    """The events of one transcript entry: its words, its tool calls, its tool results."""
    events: list[Event] = []
    stamp = entry.get("timestamp")
    try:
        at = parse_ts(stamp) if isinstance(stamp, str) else None
    except ValueError:
        at = None
    found = entry_text(entry)
    if found is not None:
        events.append(Message(found[0], found[1], at))
    message = entry.get("message")
    content = message.get("content") if isinstance(message, Mapping) else None
    if not isinstance(content, list):
        return events
    for block in content:
        if not isinstance(block, Mapping):
            continue
        if block.get("type") == "tool_use" and isinstance(block.get("name"), str):
            arguments = block.get("input")
            events.append(
                ToolUse(
                    block["name"],
                    arguments if isinstance(arguments, Mapping) else {},
                    str(block.get("id") or "") or None,
                    at,
                )
            )
        elif block.get("type") == "tool_result" and block.get("tool_use_id"):
            events.append(ToolResult(str(block["tool_use_id"]), not block.get("is_error")))
    return events


def transcript_events(path: Path) -> list[Event]:
    """The session's events, oldest first: the first request, then the readable tail."""
    chunks: list[list[Event]] = []
    with path.open("rb") as handle:
        for entry in _entries(lines_backwards(handle, MAX_TAIL_BYTES)):
            chunks.append(entry_events(entry))
        whole = handle.seek(0, os.SEEK_END) <= MAX_TAIL_BYTES
        first = None if whole else first_request(handle)
    events = [event for chunk in reversed(chunks) for event in chunk]
    return events if first is None else [first, *events]


def first_request(handle: Any) -> Message | None:
    """The session's first user message, read from the start of the file."""
    handle.seek(0)
    read = 0
    for raw in handle:
        read += len(raw)
        if read > MAX_HEAD_BYTES:
            return None
        for entry in _entries(iter([raw])):
            for event in entry_events(entry):
                if isinstance(event, Message) and event.role == "user":
                    return event
    return None


def payload_events(payload: Mapping[str, Any]) -> list[Event]:
    """The session's events: the transcript's, or a payload's own ``messages`` without one."""
    path = payload.get("transcript_path")
    if isinstance(path, str) and path.strip():
        try:
            return transcript_events(Path(path).expanduser())
        except OSError as exc:
            log.warning("checkpoint: cannot read the transcript %s: %s", path, exc)
    events: list[Event] = []
    items = payload.get("messages")
    for item in items if isinstance(items, list) else []:
        if isinstance(item, Mapping) and item.get("role") in ("user", "assistant"):
            content = item.get("content")
            if isinstance(content, str):
                events.append(Message(str(item["role"]), content))
    return events


def tool_call(payload: Mapping[str, Any]) -> tuple[ToolUse, ToolResult] | None:
    """The call a PostToolUse payload reports, with its outcome."""
    name, arguments = payload.get("tool_name"), payload.get("tool_input")
    if not isinstance(name, str) or not isinstance(arguments, Mapping):
        return None
    call_id = payload.get("tool_use_id")
    call_id = str(call_id) if call_id else f"hook-{os.getpid()}"
    response = payload.get("tool_response")
    failed = isinstance(response, Mapping) and (
        response.get("success") is False or bool(response.get("is_error") or response.get("error"))
    )
    return ToolUse(name, arguments, call_id), ToolResult(call_id, not failed)


def save(
    name: str,
    payload: Mapping[str, Any],
    backend: HookBackend,
    config: HookConfig,
    trigger: Trigger,
    extra: list[Event] | None = None,
) -> str | None:
    """Save the mechanical checkpoint; its id, or None when there was nothing to save."""
    owner = owner_of(payload, config)
    if owner is None:
        return None
    events = [*payload_events(payload), *(extra or [])]
    if not events:
        log.info("%s: the session has no events yet; no checkpoint", name)
        return None
    saved = attempt(
        f"{name}: checkpoint", lambda: backend.save_checkpoint(owner, events, trigger.value), None
    )
    if saved is not None:
        log.info("%s: checkpoint of session %s saved (%s)", name, owner.session_id, trigger.value)
    return saved


def summarize(name: str, checkpoint_id: str | None, backend: HookBackend) -> None:
    """The LLM's summary of a saved checkpoint, when the backend has an LLM (last, may be cut)."""
    if checkpoint_id is not None:
        attempt(
            f"{name}: checkpoint summary", lambda: backend.summarize_checkpoint(checkpoint_id), None
        )


def post_tool_use(
    payload: Mapping[str, Any], backend: HookBackend, config: HookConfig
) -> HookResult:
    call = tool_call(payload)
    if call is None:
        log.warning("post-tool-use: the hook input has no tool_name / tool_input; nothing saved")
        return HookResult()
    if not written_files(call[0].name, call[0].arguments):
        log.info("post-tool-use: %s writes no file; no checkpoint", call[0].name)
        return HookResult()
    save("post-tool-use", payload, backend, config, Trigger.TOOL, list(call))
    return HookResult()


def session_end(payload: Mapping[str, Any], backend: HookBackend, config: HookConfig) -> HookResult:
    """SessionEnd done in this process (the hook process hands it off: ``hooks.handoff``)."""
    attempt("session-end: checkpoint", lambda: end_session(payload, backend, config), None)
    return HookResult()


def end_session(payload: Mapping[str, Any], backend: HookBackend, config: HookConfig) -> str | None:
    """The session's last checkpoint, its summary, then the session's consolidation.

    The checkpoint's id, or None when there was nothing to save; raises
    when the save failed (the background process then keeps the hook for
    another try). The summary and the consolidation only log a failure.
    """
    owner = owner_of(payload, config)
    if owner is None:
        return None
    events = payload_events(payload)
    if not events:
        log.info("session-end: the session has no events yet; no checkpoint")
        return None
    saved = backend.save_checkpoint(owner, events, Trigger.SESSION_END.value)
    log.info("session-end: checkpoint of session %s saved (session_end)", owner.session_id)
    summarize("session-end", saved, backend)
    attempt("session-end: consolidation", lambda: backend.consolidate_session(owner), None)
    return saved


def saving_first(handler: Handler, name: str, trigger: Trigger) -> Handler:
    """``handler`` (a capture hook), with the checkpoint saved before and summarised after it."""

    def run(payload: Mapping[str, Any], backend: HookBackend, config: HookConfig) -> HookResult:
        saved = save(name, payload, backend, config, trigger)
        result = handler(payload, backend, config)
        summarize(name, saved, backend)
        return result

    return run
