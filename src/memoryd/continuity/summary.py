"""The summary track: an LLM's goal / progress / next step / findings, or what rules can derive.

Offline, the session's first request stands in for the goal, the
assistant's last words for the next step, and the tool calls and files for
the progress; ``Summary.derived`` lists those fields, so the restore (and a
person) can tell a rule's guess from a model's summary. An LLM that fails
costs the summary, never the checkpoint: the mechanical track is already
saved by then.
"""

from __future__ import annotations

import json
import logging

from memoryd.continuity.mechanical import cut
from memoryd.continuity.model import Mechanical, Summary
from memoryd.llm import LLMClient, Message
from memoryd.prompts.continuity import CHECKPOINT_SYSTEM, CheckpointAnswer

log = logging.getLogger(__name__)

MAX_FIELD_CHARS = 500
MAX_FINDINGS = 5


def derive(mechanical: Mechanical, limit: int = MAX_FIELD_CHARS) -> Summary:
    """What rules can say about the session; every field set is named in ``derived``."""
    goal = mechanical.first_user_message
    next_step = mechanical.last_assistant_message
    progress = _progress(mechanical)
    fields = {"goal": goal, "progress": progress, "next_step": next_step}
    return Summary(
        goal=cut(goal, limit) if goal else None,
        progress=progress,
        next_step=cut(next_step, limit) if next_step else None,
        key_findings=[],
        source="derived",
        derived=[name for name, value in fields.items() if value],
    )


def _progress(mechanical: Mechanical) -> str | None:
    parts: list[str] = []
    if mechanical.modified_files:
        parts.append(f"modified {len(mechanical.modified_files)} file(s)")
    if mechanical.recent_tools:
        failed = sum(1 for t in mechanical.recent_tools if t.success is False)
        last = mechanical.recent_tools[-1]
        outcome = {True: "succeeded", False: "failed", None: "outcome unknown"}[last.success]
        parts.append(
            f"{len(mechanical.recent_tools)} recent tool call(s), {failed} failed; "
            f"the last ({last.name}) {outcome}"
        )
    if not parts:
        return None
    text = "; ".join(parts)
    return text[0].upper() + text[1:]


def summarize(llm: LLMClient, mechanical: Mechanical, previous: Summary | None) -> Summary:
    """The model's summary of the session (raises ``LLMError`` when it gives none)."""
    session = {
        "first_request": mechanical.first_user_message,
        "recent_conversation": [m.model_dump() for m in mechanical.recent_messages],
        "recent_tool_calls": [
            t.model_dump(exclude={"id"}, mode="json") for t in mechanical.recent_tools
        ],
        "modified_files": mechanical.modified_files,
        "last_user_message": mechanical.last_user_message,
        "previous_summary": None
        if previous is None or previous.source != "llm"
        else previous.model_dump(include={"goal", "progress", "next_step", "key_findings"}),
    }
    messages: list[Message] = [
        {"role": "system", "content": CHECKPOINT_SYSTEM},
        {"role": "user", "content": "SESSION:\n" + json.dumps(session, ensure_ascii=False)},
    ]
    answer = llm.complete_json(messages, CheckpointAnswer)
    return Summary(
        goal=_field(answer.goal),
        progress=_field(answer.progress),
        next_step=_field(answer.next_step),
        key_findings=[cut(f, MAX_FIELD_CHARS) for f in answer.key_findings if f.strip()][
            :MAX_FINDINGS
        ],
        source="llm",
        derived=[],
    )


def _field(value: str | None) -> str | None:
    return cut(value, MAX_FIELD_CHARS) if value and value.strip() else None
