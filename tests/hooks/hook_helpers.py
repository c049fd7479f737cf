"""Running ``memoryd hook`` as Claude Code does: a process, JSON on stdin, stdout captured."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HOOK_TIMEOUT_S = 60


@dataclass
class Ran:
    code: int
    out: str
    err: str
    seconds: float

    def json(self) -> Any:
        return json.loads(self.out)


def clean_env(**extra: str) -> dict[str, str]:
    """The environment without any memoryd or ourmem setting, plus ``extra``.

    The resident hook process is off unless ``extra`` turns it on: a test
    that starts one stops it (test_hook_resident.py).
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORYD_", "OMEM_"))}
    env.update(PYTHONIOENCODING="utf-8", MEMORYD_HOOK_RESIDENT="0")
    env.update(extra)
    return env


def memoryd(args: list[str], env: dict[str, str], stdin: str = "", *flags: str) -> Ran:
    """``python -m memoryd ARGS`` (what the console script runs), ``flags`` to Python."""
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, *flags, "-m", "memoryd", *args],
        input=stdin.encode(),
        capture_output=True,
        env=env,
        timeout=120,
    )
    return Ran(
        proc.returncode,
        proc.stdout.decode(),
        proc.stderr.decode(errors="replace"),
        time.monotonic() - started,
    )


def wait_for(condition: Callable[[], bool], what: str, timeout_s: float) -> None:
    """Polls ``condition`` until it holds; fails naming ``what`` after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def hook_log(home: Path) -> str:
    """What the hooks logged in ``home``, empty before the first line."""
    path = home / "logs" / "hooks.log"
    return path.read_text(encoding="utf-8") if path.exists() else ""


def run_hook_process(command: str, stdin: dict[str, Any] | str, env: dict[str, str]) -> Ran:
    """``memoryd hook COMMAND`` as Claude Code runs it: JSON on stdin, stdout captured."""
    data = stdin if isinstance(stdin, str) else json.dumps(stdin, ensure_ascii=False)
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "memoryd.cli", "hook", command],
        input=data.encode("utf-8"),
        capture_output=True,
        env=env,
        timeout=HOOK_TIMEOUT_S,
    )
    return Ran(
        proc.returncode,
        proc.stdout.decode("utf-8"),
        proc.stderr.decode("utf-8", errors="replace"),
        time.monotonic() - started,
    )
