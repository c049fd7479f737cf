"""The ``memoryd`` console script (and ``python -m memoryd``).

A prompt hook whose home has a resident process is answered here, before
the command line and its libraries load (:func:`memoryd.hooks.resident.fast_hook`):
it runs before every prompt a user sends. Everything else is the command
line, :mod:`memoryd.cli`.
"""

from __future__ import annotations

import sys


def main() -> None:
    from memoryd.threads import limit_blas

    limit_blas()  # before anything imports NumPy
    if "hook" in sys.argv[1:]:  # only a hook pays for the resident's client
        from memoryd.hooks.resident import fast_hook

        code = fast_hook(sys.argv[1:])
        if code is not None:
            sys.exit(code)
    from memoryd.cli import main as command_line

    command_line()
