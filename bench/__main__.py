"""``python -m bench COMMAND``: longmemeval, locomo, context, first-week, speed, startup,
import, continuity, server, proxy, rerank, ingest-latency, crosslingual.

longmemeval, locomo and speed are those of BENCHMARKS.md; first-week is
memoryd's own scripted set for smart ingest (:mod:`bench.first_week`). The
commands live in :mod:`bench.quality_commands` and :mod:`bench.speed_commands`.
"""

from __future__ import annotations

import faulthandler
import signal
from types import FrameType

from bench import quality_commands, speed_commands  # noqa: F401  (they register the commands)
from bench.cli import app
from bench.common import git_commit


def _stopped(signum: int, frame: FrameType | None) -> None:
    """SIGTERM (``kill``, ``timeout``) stops a run as Ctrl-C does: what it started (a
    ``memoryd serve``, the --jobs workers) is stopped on the way out, not left running."""
    raise KeyboardInterrupt


if __name__ == "__main__":
    faulthandler.enable()  # a crash names the thread and frame it happened in
    signal.signal(signal.SIGTERM, _stopped)
    git_commit()  # the code this run measures: read now, not when its report is written
    app()
