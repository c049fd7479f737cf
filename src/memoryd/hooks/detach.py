"""``memoryd`` subcommands started detached from a hook, so the hook can answer and leave.

Claude Code waits for a hook's process; work that need not be done before
the answer (an ingest task's remainder, a checkpoint's LLM summary) runs in
a process of its own session, with no stdin or stdout tied to the hook.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def spawn_memoryd(args: list[str], home: Path | None) -> None:
    """Start ``memoryd [--home HOME] ARGS`` detached; ``OSError`` when it cannot be started."""
    command = [sys.executable, "-m", "memoryd.cli"]
    if home is not None:
        command += ["--home", str(home)]
    subprocess.Popen(
        command + args,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        close_fds=True,
    )
