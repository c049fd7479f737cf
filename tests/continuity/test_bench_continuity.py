"""The continuity benchmark runs end to end on a short session (its numbers are not asserted)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_continuity_bench_reports_its_measurements() -> None:
    ran = subprocess.run(
        [sys.executable, "-m", "bench", "continuity", "--turns", "6"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
        env={**os.environ, "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT}", "COLUMNS": "200"},
    )
    assert ran.returncode == 0, ran.stderr
    report = json.loads(ran.stdout)
    assert report["turns"] == 6 and report["restore_chars"] > 0
    assert set(report["save_ms"]) == {"p50", "p95", "p99"} and report["consolidation_s"] > 0
