"""``memoryd``: the command line door. Human output by default, ``--json`` for scripts."""

from memoryd.cli import serve as _serve  # noqa: F401  (registers `memoryd serve`)
from memoryd.cli.app import app

__all__ = ["app"]
