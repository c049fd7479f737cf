"""A small file system of its own, filled up: what a full disk really does.

A tmpfs is mounted for the test (``make test`` runs as root, for its system
packages; a runner without the right to mount fails the test with a message
saying so, rather than skipping it).
"""

from __future__ import annotations

import errno
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def small_disk(where: Path, size: str) -> Iterator[Path]:
    where.mkdir(parents=True, exist_ok=True)
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size},mode=0777", "tmpfs", str(where)],
        capture_output=True,
        text=True,
    )
    if mounted.returncode != 0:
        raise AssertionError(f"cannot mount a tmpfs (this test needs root): {mounted.stderr}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def fill(path: Path) -> None:
    """Take every free byte of the file system ``path`` is on."""
    with path.open("wb", buffering=0) as out:  # unbuffered: closing writes nothing more
        for size in (1 << 20, 4096, 1):
            block = b"\0" * size
            try:
                while True:
                    out.write(block)
            except OSError as exc:
                assert exc.errno == errno.ENOSPC
