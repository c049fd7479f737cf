"""``memoryd``: the command line door. Human output by default, ``--json`` for scripts."""

# each import registers its commands on ``app``
from memoryd.cli import hook as _hook  # noqa: F401  (hook, profile)
from memoryd.cli import import_file as _import_file  # noqa: F401  (import-file)
from memoryd.cli import mcp as _mcp  # noqa: F401  (mcp)
from memoryd.cli import serve as _serve  # noqa: F401  (serve)
from memoryd.cli import storage as _storage  # noqa: F401  (check, backup, restore)
from memoryd.cli.app import app

__all__ = ["app"]
