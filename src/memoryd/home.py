"""Where a home is: the data directory and its settings file, found without loading anything.

Kept apart from :mod:`memoryd.config` (which loads pydantic-settings) so that
the prompt hooks' fast path can find the home's resident process in a few
milliseconds.
"""

from __future__ import annotations

import os
from pathlib import Path

CONFIG_FILENAME = "config.toml"


def default_home() -> Path:
    """``$MEMORYD_HOME``, else ``$XDG_DATA_HOME/memoryd``, else ``~/.local/share/memoryd``."""
    if env := os.environ.get("MEMORYD_HOME"):
        return Path(env).expanduser()
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base).expanduser() / "memoryd"


def config_file(home: Path) -> Path:
    """``$MEMORYD_CONFIG`` when set, else ``config.toml`` inside the home."""
    if env := os.environ.get("MEMORYD_CONFIG"):
        return Path(env).expanduser()
    return home / CONFIG_FILENAME
