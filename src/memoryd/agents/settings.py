"""An agent's memory settings, per profile, and where each profile keeps its memories.

A profile is a separate home (``<home>/profiles/<name>/``): its own
database, its own ``config.toml`` and its own ``settings.json``, so no
profile can read another's memories. The settings are the ``"memory"``
object of that ``settings.json``::

    {"memory": {"enabled": true, "provider": "local", "sync_turns": true,
                "prefetch": true, "max_prompt_chars": 6000}}

and arguments given in code override the file.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from pydantic import ValidationError as PydanticValidationError

from memoryd.config import default_home
from memoryd.errors import ValidationError

SETTINGS_FILENAME = "settings.json"
PROFILES_DIR = "profiles"
# a profile name is a folder name: no separators, no dot-only names, nothing to escape
_PROFILE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


class AgentMemorySettings(BaseModel):
    """What the memory layer does around each turn (seed 001's settings)."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = True
    # the provider's registered name; None turns memory off, as enabled=false does
    provider: str | None = "local"
    # store each completed turn and distil it in the background
    sync_turns: bool = True
    # recall before each turn
    prefetch: bool = True
    # the recalled block never costs the prompt more than this
    max_prompt_chars: int = Field(default=6000, gt=0)
    # memories recalled per turn (seed 001: top 5)
    top_k: int = Field(default=5, ge=1, le=50)
    # below this cosine a hit says nothing about the query: better no block than noise
    min_similarity: float = Field(default=0.15, ge=0.0, le=1.0)
    # the provider's own settings (a server's url and api_key, a bank id, …)
    options: dict[str, Any] = Field(default_factory=dict)


def profile_home(profile: str | None, home: Path | str | None = None) -> Path:
    """The home a profile keeps its memories in; the base home itself without a profile."""
    base = Path(home).expanduser() if home is not None else default_home()
    if profile is None:
        return base
    if not isinstance(profile, str) or not _PROFILE_NAME.match(profile) or ".." in profile:
        raise ValidationError(
            f"invalid profile name {profile!r}: use letters, digits, '.', '_' or '-' "
            "(it names a folder under profiles/)"
        )
    return base / PROFILES_DIR / profile


def load_agent_settings(
    home: Path, given: AgentMemorySettings | dict[str, Any] | None = None, **overrides: Any
) -> AgentMemorySettings:
    """The file's ``"memory"`` object, then ``given``, then ``overrides``; errors say where."""
    merged: dict[str, Any] = {}
    path = home / SETTINGS_FILENAME
    if path.exists():
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ValidationError(f"cannot read {path}: {exc}") from None
        section = data.get("memory", {}) if isinstance(data, dict) else None
        if not isinstance(section, dict):
            raise ValidationError(f'{path}: "memory" must be an object')
        merged |= section
    if isinstance(given, AgentMemorySettings):
        merged |= given.model_dump(exclude_unset=True)
    elif given is not None:
        merged |= given
    merged |= overrides
    try:
        return AgentMemorySettings.model_validate(merged)
    except PydanticValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'settings'}: {e['msg']}" for e in exc.errors()
        )
        raise ValidationError(f"invalid memory settings ({problems})") from None
