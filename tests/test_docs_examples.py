"""The examples the docs mark runnable run as pasted, against a new home.

A fenced ``python`` or ``sh`` block right after a ``<!-- runnable -->`` line
in README.md or docs/*.md is run as a reader would paste it: Python with the
project's interpreter, a shell block line by line with ``memoryd`` on the
PATH, each in an empty folder with its own ``MEMORYD_HOME``, offline. A
block that raises, or a command that exits non-zero, fails here with the
page and line it came from.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
MARK = "<!-- runnable -->"
BLOCK = re.compile(r"^```(python|sh)\n(.*?)^```", re.S | re.M)
RUN_TIMEOUT_S = 300


@dataclass(frozen=True)
class Example:
    page: Path
    line: int
    language: str
    code: str

    def __str__(self) -> str:
        return f"{self.page.name}:{self.line}"


def examples() -> list[Example]:
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for match in BLOCK.finditer(text):
            before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
            if before.strip() == MARK:
                line = text[: match.start()].count("\n") + 1
                found.append(Example(page, line, match.group(1), match.group(2)))
    return found


def test_the_docs_mark_examples_to_run() -> None:
    assert any(e.page.name == "README.md" for e in examples())


@pytest.mark.parametrize("example", examples(), ids=str)
def test_a_runnable_example_runs_as_pasted(example: Example, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORYD_", "OMEM_"))}
    bin_dir = str(Path(sys.executable).parent)
    env.update(
        MEMORYD_HOME=str(tmp_path / "home"),
        HF_HUB_OFFLINE="1",
        PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}",
        COLUMNS="120",
    )
    if example.language == "python":
        command = [sys.executable, "-c", example.code]
    else:
        command = ["bash", "-euo", "pipefail", "-c", example.code]
    ran = subprocess.run(
        command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT_S
    )
    assert ran.returncode == 0, f"{example}\n{ran.stdout[-2000:]}\n{ran.stderr[-2000:]}"
