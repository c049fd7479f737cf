"""Startup: wall time of ``memoryd`` commands and of the Claude Code prompt hook, as processes.

A command that does not embed (list, get, stats, forget, ``--help``) should
cost what starting Python and opening the database cost, not what loading
the model costs; the ``user-prompt`` hook runs before every prompt a user
sends, so its whole process, from start to exit, is what the user waits for.

Each row runs the command ``runs`` times in a fresh process against one
small home and reports p50/p95 of the wall time (milliseconds). The hook is
measured twice: with no resident process (the hook opens the home and loads
the model itself) and with the resident hook process of the home running
(:mod:`memoryd.hooks.resident`), which is how it runs from the second prompt on.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.table import Table

from memoryd.hooks.resident import is_running
from memoryd.service import MemoryService

FACTS = [
    "I prefer green tea to coffee in the morning.",
    "My daughter Ana starts school in September.",
    "The staging database runs on port 5433.",
    "We deploy the API with a blue-green rollout on Fridays.",
    "I am allergic to peanuts.",
]
PROMPT = {"session_id": "bench", "prompt": "which port does the staging database use?"}


def _percentiles(samples: list[tuple[float, float]]) -> dict[str, float]:
    """p50/p95 of the wall time and p50 of the CPU time, in milliseconds.

    The CPU time (user + system of the child) is the steadier number on a
    shared machine: other work stretches the wall time, not the CPU time.
    """
    wall = np.asarray([w for w, _ in samples])
    cpu = np.asarray([c for _, c in samples])
    p50, p95 = np.percentile(wall, [50, 95])
    return {
        "p50_ms": round(float(p50), 1),
        "p95_ms": round(float(p95), 1),
        "cpu_p50_ms": round(float(np.percentile(cpu, 50)), 1),
    }


def _timed(args: list[str], env: dict[str, str], stdin: bytes | None = None) -> tuple[float, float]:
    """(wall ms, CPU ms) of one process running ``args`` to its end."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(args, input=stdin, env=env, capture_output=True, check=False)
    elapsed = (time.perf_counter() - started) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed: {done.stderr.decode(errors='replace')}")
    return elapsed, cpu


def _hook_env(home: Path, resident: bool) -> dict[str, str]:
    # bytecode cached as an installed package has it (pip writes it; a source checkout
    # writes it on the first run): a process that compiles memoryd's modules again every
    # time (PYTHONDONTWRITEBYTECODE) measures the compiler, not the start
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("MEMORYD_", "OMEM_")) and k != "PYTHONDONTWRITEBYTECODE"
    }
    env["MEMORYD_HOME"] = str(home)
    env["MEMORYD_HOOK_RESIDENT"] = "1" if resident else "0"
    return env


def run(runs: int) -> dict[str, Any]:
    started = time.perf_counter()
    memoryd = [sys.executable, "-m", "memoryd"]  # what the console script runs
    rows: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="memoryd-startup-") as tmp:
        home = Path(tmp) / "home"
        with MemoryService(home) as svc:
            ids = [svc.add(fact).id for fact in FACTS]
            spare = [svc.add(f"note number {i} to forget").id for i in range(runs)]
        env = _hook_env(home, resident=False)
        commands = {
            "--help": ["--help"],
            "list": ["list"],
            "get": ["get", ids[0]],
            "stats": ["stats"],
        }
        for name, args in commands.items():
            _timed(memoryd + args, env)  # untimed: writes the bytecode an install ships
            rows[name] = _percentiles([_timed(memoryd + args, env) for _ in range(runs)])
        rows["forget"] = _percentiles([_timed([*memoryd, "forget", i], env) for i in spare])
        hook = [*memoryd, "hook", "user-prompt"]
        payload = json.dumps(PROMPT).encode()
        rows["hook user-prompt (no resident)"] = _percentiles(
            [_timed(hook, env, payload) for _ in range(max(3, runs // 3))]
        )
        resident_env = _hook_env(home, resident=True)
        _timed(hook, resident_env, payload)  # starts the resident process
        _wait_resident(home)
        try:
            rows["hook user-prompt (resident)"] = _percentiles(
                [_timed(hook, resident_env, payload) for _ in range(runs)]
            )
        finally:
            _stop_resident(home, resident_env)
    return {
        "benchmark": "startup",
        "questions": runs,
        "metrics": rows,
        "config": {
            "runs": runs,
            "command": "python -m memoryd (the console script), one process per run, "
            "bytecode cached (one untimed run first)",
            "hook": "user-prompt, a 5-memory home; no resident: MEMORYD_HOOK_RESIDENT=0",
        },
        "wall_s": round(time.perf_counter() - started, 1),
    }


def _wait_resident(home: Path, timeout_s: float = 120.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not is_running(home):
        if time.monotonic() > deadline:
            raise RuntimeError("the resident hook process did not start")
        time.sleep(0.2)


def _stop_resident(home: Path, env: dict[str, str]) -> None:
    subprocess.run(
        [sys.executable, "-m", "memoryd", "hook", "resident", "--stop"],
        env=env,
        capture_output=True,
        check=False,
    )


def print_report(report: dict[str, Any], console: Console) -> None:
    table = Table(title=f"startup: one process per run, {report['questions']} runs")
    table.add_column("command")
    table.add_column("p50 ms", justify="right")
    table.add_column("p95 ms", justify="right")
    table.add_column("CPU p50 ms", justify="right")
    for name, row in report["metrics"].items():
        table.add_row(
            name, f"{row['p50_ms']:.0f}", f"{row['p95_ms']:.0f}", f"{row['cpu_p50_ms']:.0f}"
        )
    console.print(table)
