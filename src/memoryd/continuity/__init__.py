"""Session continuity: checkpoints that let an agent pick up where it left off.

A checkpoint (``model``) is saved per agent session, in a project, from
what the host reports (``mechanical``, and ``claude_code`` for Claude
Code's transcripts), with an LLM's summary when one is configured
(``summary``); a new session starts with it rendered in seed 004's format
(``render``). ``service.Continuity`` is what the doors call.
"""

from __future__ import annotations

from memoryd.continuity.config import ContinuityConfig
from memoryd.continuity.mechanical import Message, ToolResult, ToolUse, written_files
from memoryd.continuity.model import Checkpoint, Mechanical, Owner, Summary, Trigger
from memoryd.continuity.service import Continuity

__all__ = [
    "Checkpoint",
    "Continuity",
    "ContinuityConfig",
    "Mechanical",
    "Message",
    "Owner",
    "Summary",
    "ToolResult",
    "ToolUse",
    "Trigger",
    "written_files",
]
