"""The mechanical checkpoint: read off the session's events, within seed 004's limits.

A host tells memoryd what happened as a list of events (messages, tool
calls, tool results), in order; :func:`build` keeps the last
``max_recent_msgs`` exchanges (each message cut to ``max_msg_chars``), the
last ``max_recent_tools`` tool calls with their arguments and outcome, up to
``max_modified_files`` files the session wrote (newest kept), the first and
the last thing the user said, and when. A previous checkpoint of the same
session contributes the files and the first request that the events at hand
no longer reach, so a long session does not forget what it touched early.

Which tool calls modify files is :func:`written_files`: the editing tools by
name (Edit, Write, MultiEdit, NotebookEdit, apply_patch and their kin), and
a shell command only when it clearly writes (a redirection into a file,
``tee``, ``sed -i``, ``touch``, ``cp``/``mv`` to a target).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from memoryd.continuity.config import ContinuityConfig
from memoryd.continuity.model import Exchange, Mechanical, ToolCall
from memoryd.models import utcnow
from memoryd.privacy import REDACTED, redact

# tools that write the file their arguments name
EDIT_TOOLS = frozenset(
    {
        "edit",
        "write",
        "multiedit",
        "notebookedit",
        "str_replace_editor",
        "str_replace_based_edit_tool",
        "write_file",
        "edit_file",
        "create_file",
        "replace_in_file",
    }
)
PATCH_TOOLS = frozenset({"apply_patch", "applypatch", "patch"})
SHELL_TOOLS = frozenset({"bash", "shell", "exec", "run_shell_command", "terminal"})
# viewing with the editor tool writes nothing
READ_ONLY_COMMANDS = frozenset({"view"})
PATH_KEYS = ("file_path", "filePath", "notebook_path", "path", "filename", "target_file")
PATCH_FILE = re.compile(r"^\*\*\* (?:Update|Add|Delete) File: (.+)$", re.MULTILINE)
PATCH_MOVE = re.compile(r"^\*\*\* Move to: (.+)$", re.MULTILINE)
# one argument value shown in a tool call: enough to recognise it, never a file's content
MAX_ARGUMENT_CHARS = 200
DEVICES = ("/dev/",)


@dataclass(frozen=True)
class Message:
    role: str  # "user" or "assistant"
    text: str
    at: datetime | None = None


@dataclass(frozen=True)
class ToolUse:
    name: str
    arguments: Mapping[str, Any]
    id: str | None = None
    at: datetime | None = None


@dataclass(frozen=True)
class ToolResult:
    id: str | None
    success: bool


Event = Message | ToolUse | ToolResult


@dataclass
class _Tally:
    tools: list[ToolCall] = field(default_factory=list)
    files: list[str] = field(default_factory=list)


def written_files(name: str, arguments: Mapping[str, Any]) -> list[str]:
    """The files a tool call writes; ``[]`` for one that writes none (or not clearly)."""
    tool = name.rsplit("__", 1)[-1].casefold()  # MCP tools: mcp__server__write_file
    if tool in EDIT_TOOLS:
        if str(arguments.get("command", "")).casefold() in READ_ONLY_COMMANDS:
            return []
        return [str(v) for k in PATH_KEYS if isinstance(v := arguments.get(k), str) and v][:1]
    if tool in PATCH_TOOLS:
        text = next((v for v in arguments.values() if isinstance(v, str) and "***" in v), "")
        return [m.strip() for m in PATCH_FILE.findall(text) + PATCH_MOVE.findall(text)]
    if tool in SHELL_TOOLS:
        command = arguments.get("command") or arguments.get("cmd")
        if isinstance(command, list):
            command = " ".join(str(c) for c in command)
        return shell_writes(command) if isinstance(command, str) else []
    return []


def shell_writes(command: str) -> list[str]:
    """Files a shell command clearly writes; a command it cannot parse writes none it knows of."""
    try:
        words = shlex.split(command, comments=True, posix=True)
    except ValueError:
        return []
    found: list[str] = []
    for i, word in enumerate(words):
        target: str | None = None
        if word in (">", ">>", "1>", "&>") and i + 1 < len(words):
            target = words[i + 1]
        elif re.fullmatch(r"(?:1|&)?>>?[^>&].*", word):
            target = word.lstrip("1&").lstrip(">")
        if target:
            found.append(target)
    for part in _commands(words):
        head = part[0] if part else ""
        args = [a for a in part[1:] if not a.startswith("-")]
        if head == "tee" or head == "touch":
            found.extend(args)
        elif head == "sed" and any(a.startswith("-i") for a in part[1:]):
            found.extend(args[1:])
        elif head in ("cp", "mv") and len(args) >= 2:
            found.append(args[-1])
    return [f for f in dict.fromkeys(found) if f and not f.startswith(DEVICES)]


def _commands(words: Sequence[str]) -> list[list[str]]:
    parts: list[list[str]] = [[]]
    for word in words:
        if word in ("|", "||", "&&", ";", "&"):
            parts.append([])
        else:
            parts[-1].append(word)
    return [p for p in parts if p]


def shown_arguments(arguments: Mapping[str, Any]) -> dict[str, object]:
    """The arguments as a checkpoint keeps them: scalars cut short, bulky values summarised."""
    out: dict[str, object] = {}
    for key, value in arguments.items():
        if isinstance(value, str):
            out[key] = (
                value if len(value) <= MAX_ARGUMENT_CHARS else value[:MAX_ARGUMENT_CHARS] + "…"
            )
        elif isinstance(value, bool | int | float) or value is None:
            out[key] = value
        else:
            out[key] = f"<{type(value).__name__}>"
    return out


def redacted(events: Iterable[Event]) -> list[Event]:
    """The events with ``<private>`` blocks replaced (a message private whole is dropped):
    what a checkpoint or a session layer stores never holds them, nor what an LLM is sent."""
    out: list[Event] = []
    for event in events:
        if isinstance(event, Message):
            text = redact(event.text)
            if text is not None:
                out.append(Message(event.role, text, event.at))
        elif isinstance(event, ToolUse):
            arguments = {
                k: (redact(v) or REDACTED) if isinstance(v, str) else v
                for k, v in event.arguments.items()
            }
            out.append(ToolUse(event.name, arguments, event.id, event.at))
        else:
            out.append(event)
    return out


def cut(text: str, limit: int) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def build(
    events: Iterable[Event],
    config: ContinuityConfig,
    previous: Mechanical | None = None,
) -> Mechanical:
    """The mechanical checkpoint of ``events`` (oldest first), continuing ``previous``."""
    messages: list[Message] = []
    tally = _Tally()
    by_id: dict[str, ToolCall] = {}
    for event in events:
        if isinstance(event, Message):
            if event.text.strip():
                messages.append(event)
        elif isinstance(event, ToolUse):
            if event.id and event.id in by_id:
                continue  # the same call seen twice (a hook payload and the transcript)
            call = ToolCall(
                name=event.name, arguments=shown_arguments(event.arguments), id=event.id
            )
            tally.tools.append(call)
            if event.id:
                by_id[event.id] = call
            tally.files.extend(written_files(event.name, event.arguments))
        elif event.id and event.id in by_id:
            by_id[event.id].success = event.success

    limit = config.max_msg_chars
    users = [m for m in messages if m.role == "user"]
    assistants = [m for m in messages if m.role == "assistant"]
    files = list(previous.modified_files) if previous else []
    for path in tally.files:
        if path in files:
            files.remove(path)
        files.append(path)  # the most recently written last
    first = users[0].text if users else None
    if previous is not None and previous.first_user_message:
        first = previous.first_user_message
    stamps = [e.at for e in messages if e.at is not None]
    started = previous.started_at if previous and previous.started_at else None
    return Mechanical(
        first_user_message=cut(first, limit) if first else None,
        last_user_message=cut(users[-1].text, limit)
        if users
        else (previous.last_user_message if previous else None),
        last_assistant_message=cut(assistants[-1].text, limit)
        if assistants
        else (previous.last_assistant_message if previous else None),
        recent_messages=_recent(messages, config.max_recent_msgs, limit)
        or (list(previous.recent_messages) if previous else []),
        recent_tools=_tools(previous, tally.tools, by_id, config.max_recent_tools),
        modified_files=files[-config.max_modified_files :] if config.max_modified_files else [],
        started_at=started or (min(stamps) if stamps else utcnow()),
        last_activity_at=utcnow(),
    )


def _recent(messages: Sequence[Message], exchanges: int, limit: int) -> list[Exchange]:
    """The last ``exchanges`` exchanges (a user message and what followed it)."""
    if exchanges <= 0:
        return []
    starts = [i for i, m in enumerate(messages) if m.role == "user"]
    begin = starts[-exchanges] if len(starts) >= exchanges else 0
    return [Exchange(role=m.role, content=cut(m.text, limit)) for m in messages[begin:]]


def _tools(
    previous: Mechanical | None, calls: list[ToolCall], by_id: Mapping[str, ToolCall], keep: int
) -> list[ToolCall]:
    """The last ``keep`` calls: the previous checkpoint's, less those seen again, then these."""
    if keep <= 0:
        return []
    earlier = [
        t for t in (previous.recent_tools if previous else []) if not (t.id and t.id in by_id)
    ]
    return [*earlier, *calls][-keep:]
