"""Checkpoint limits: seed 004's defaults, overridable like every other setting.

``MEMORYD_CHECKPOINT_MAX_PREPEND_CHARS`` and its siblings (or the
``checkpoint_*`` keys of the config file) set them; see ``memoryd.config``.
"""

from __future__ import annotations

from dataclasses import dataclass

from memoryd.config import Settings


@dataclass(frozen=True)
class ContinuityConfig:
    max_prepend_chars: int = 4000  # the whole restore block, fence included
    max_msg_chars: int = 500  # one message of the recent conversation
    max_recent_msgs: int = 3  # exchanges kept (a user message and the answer to it)
    max_recent_tools: int = 5
    max_modified_files: int = 20

    @classmethod
    def from_settings(cls, settings: Settings) -> ContinuityConfig:
        return cls(
            max_prepend_chars=settings.checkpoint_max_prepend_chars,
            max_msg_chars=settings.checkpoint_max_msg_chars,
            max_recent_msgs=settings.checkpoint_max_recent_msgs,
            max_recent_tools=settings.checkpoint_max_recent_tools,
            max_modified_files=settings.checkpoint_max_modified_files,
        )
