"""``memoryd``: the command line door. Human output by default, ``--json`` for scripts."""

# each import registers its commands on ``app``, in the order --help lists them
from memoryd.cli import memories as _memories  # noqa: F401  (add, search, list, get, update, …)

# isort: split
from memoryd.cli import agent_tasks as _agent_tasks  # noqa: F401  (task)
from memoryd.cli import checkpoint as _checkpoint  # noqa: F401  (checkpoint)
from memoryd.cli import consolidate as _consolidate  # noqa: F401  (consolidate)
from memoryd.cli import context as _context  # noqa: F401  (context)
from memoryd.cli import data as _data  # noqa: F401  (export, import, reindex, ingest, task)
from memoryd.cli import hook as _hook  # noqa: F401  (profile; hook)
from memoryd.cli import import_file as _import_file  # noqa: F401  (import-file, imports)
from memoryd.cli import keys as _keys  # noqa: F401  (keys)
from memoryd.cli import mcp as _mcp  # noqa: F401  (mcp)
from memoryd.cli import migrate as _migrate  # noqa: F401  (migrate)
from memoryd.cli import serve as _serve  # noqa: F401  (serve)
from memoryd.cli import storage as _storage  # noqa: F401  (check, backup, restore)
from memoryd.cli.app import app
from memoryd.cli.app import run as main

__all__ = ["app", "main"]
