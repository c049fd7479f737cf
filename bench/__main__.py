"""``python -m bench COMMAND``: longmemeval, locomo, context, first-week, speed, startup,
import, continuity, server, proxy, rerank, ingest-latency, crosslingual.

longmemeval, locomo and speed are those of BENCHMARKS.md; first-week is
memoryd's own scripted set for smart ingest (:mod:`bench.first_week`). The
commands live in :mod:`bench.quality_commands` and :mod:`bench.speed_commands`.
"""

from __future__ import annotations

from bench import quality_commands, speed_commands  # noqa: F401  (they register the commands)
from bench.cli import app

if __name__ == "__main__":
    app()
