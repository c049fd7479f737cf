"""What a hook hands back: Claude Code's hook JSON, and work left for after the answer."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from memoryd.errors import MemorydError

log = logging.getLogger(__name__)
T = TypeVar("T")


@dataclass(frozen=True)
class HookResult:
    """``output`` is printed as JSON (None prints nothing); ``pending_task`` is an embedded
    smart-ingest task still unfinished, which the runner hands to a background process."""

    output: dict[str, Any] | None = None
    pending_task: str | None = None


def context_output(event: str, text: str) -> dict[str, Any] | None:
    """``hookSpecificOutput.additionalContext`` for SessionStart and UserPromptSubmit."""
    if not text:
        return None
    return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}


def attempt(what: str, call: Callable[[], T], default: T) -> T:
    """``call()``, or ``default`` with the reason in the hook log.

    One failed part (the profile, the search) must not cost the others: a
    hook injects what it could get.
    """
    try:
        return call()
    except MemorydError as exc:
        log.warning("%s failed: %s", what, exc.message)
    except Exception:
        log.exception("%s failed", what)
    return default
