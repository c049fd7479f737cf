"""A checkpoint as the text a new session starts with, in seed 004's format.

::

    [Session restored — Last active: 15 minutes ago]
    Goal: …
    Progress: …
    Next step: …
    Key findings: …

    Last user message: "…"
    Recent conversation:
      User: …
      Assistant: …
    Recent tool calls:
      - Edit({"file_path": "src/app.py"}) → Success
    Modified files: src/app.py, src/config.py

The summary comes first (an LLM's, or the rule-derived fields marked
``(derived)``), the mechanical track after it. Everything sits inside the
fenced block ``inject.py`` renders, each value made inert the same way
recalled memories are, and the whole block (fence included) stays within
``max_prepend_chars``: when it would not, the lines that matter least to
picking the work up again (the older conversation first) are left out.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime

from memoryd.continuity.model import Checkpoint, Summary
from memoryd.continuity.summary import derive
from memoryd.inject import fenced, inert
from memoryd.models import to_utc, utcnow

OUTCOME = {True: "Success", False: "Failed", None: "No result yet"}
DERIVED = " (derived)"
# one rendered value: a message is already cut to max_msg_chars; this bounds the rest
MAX_VALUE_CHARS = 600


@dataclass(frozen=True)
class _Line:
    order: int  # where it is shown
    priority: int  # what is kept first when the budget is short (lower first)
    text: str
    group: str | None = None  # a heading shown when any line of its group is


def long_age(then: datetime, now: datetime | None = None) -> str:
    """``just now``, ``15 minutes ago``, ``3 hours ago``, ``2 days ago``."""
    seconds = (to_utc(now or utcnow()) - to_utc(then)).total_seconds()
    if seconds < 60:
        return "just now"
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds >= size:
            count = int(seconds // size)
            return f"{count} {unit}{'' if count == 1 else 's'} ago"
    return "just now"


def _value(text: str | None, limit: int = MAX_VALUE_CHARS) -> str | None:
    return inert(text, limit) if text else None


def render(checkpoint: Checkpoint, max_chars: int, now: datetime | None = None) -> str:
    """The fenced restore block, ``""`` when not even its heading fits."""
    lines = _lines(checkpoint, now)
    groups = {
        "conversation": "Recent conversation:",
        "tools": "Recent tool calls:",
    }
    chosen: list[_Line] = []
    for line in sorted(lines, key=lambda x: (x.priority, x.order)):
        trial = [*chosen, line]
        if len(_assemble(trial, groups)) <= max_chars:
            chosen = trial
    return _assemble(chosen, groups) if chosen else ""


def _assemble(lines: list[_Line], groups: dict[str, str]) -> str:
    out: list[str] = []
    shown: set[str] = set()
    summary = any(0 < line.order < 10 for line in lines)
    for line in sorted(lines, key=lambda x: x.order):
        if summary and line.order >= 10:
            out.append("")  # the summary, then the mechanical track
            summary = False
        if line.group and line.group not in shown:
            shown.add(line.group)
            out.append(groups[line.group])
        out.append(line.text)
    return fenced(out)


def _summary_lines(summary: Summary, fallback: Summary) -> list[_Line]:
    lines: list[_Line] = []
    fields = (("Goal", "goal", 1), ("Progress", "progress", 4), ("Next step", "next_step", 2))
    for order, (label, name, priority) in enumerate(fields, start=1):
        value: str | None = getattr(summary, name)
        derived = name in summary.derived
        if not value:
            value, derived = getattr(fallback, name), True
        shown = _value(value)
        if shown:
            lines.append(_Line(order, priority, f"{label}: {shown}{DERIVED if derived else ''}"))
    findings = [f for f in (_value(f, 300) for f in summary.key_findings) if f]
    if findings:
        lines.append(_Line(4, 5, "Key findings: " + "; ".join(findings)))
    return lines


def _lines(checkpoint: Checkpoint, now: datetime | None) -> list[_Line]:
    m = checkpoint.mechanical
    derived = derive(m)
    summary = checkpoint.summary or derived
    age = long_age(checkpoint.updated_at, now)
    lines = [_Line(0, 0, f"[Session restored — Last active: {age}]")]
    lines += _summary_lines(summary, derived)
    last = _value(m.last_user_message)
    if last:
        lines.append(_Line(10, 3, f'Last user message: "{last}"'))
    count = len(m.recent_messages)
    for i, message in enumerate(m.recent_messages):
        text = _value(message.content)
        if text:
            role = "User" if message.role == "user" else "Assistant"
            # the newest messages are kept first when the budget is short
            lines.append(_Line(20 + i, 30 + count - i, f"  {role}: {text}", "conversation"))
    for i, tool in enumerate(m.recent_tools):
        arguments = json.dumps(tool.arguments, ensure_ascii=False)
        text = _value(f"{tool.name}({arguments}) → {OUTCOME[tool.success]}", 300)
        if text:
            lines.append(_Line(100 + i, 10 + len(m.recent_tools) - i, f"  - {text}", "tools"))
    files = [f for f in (_value(path, 200) for path in m.modified_files) if f]
    if files:
        lines.append(_Line(200, 6, "Modified files: " + ", ".join(files)))
    return lines
