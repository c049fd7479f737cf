"""Store fixtures: real child processes on the test's home (see ``childproc``)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from childproc import Child


@pytest.fixture
def spawn(tmp_path: Path) -> Iterator[Callable[[Path], Child]]:
    """Start driver processes on a home; every one is stopped at teardown."""
    children: list[Child] = []

    def start(home: Path) -> Child:
        child = Child(home, tmp_path, f"child{len(children)}")
        children.append(child)
        return child

    yield start
    for child in children:
        child.close()
