"""The home's resident hook process: the prompt hooks answered by a process that stays warm.

A ``user-prompt`` hook runs before every prompt a user sends. Started cold it
loads Python's libraries, opens the store and loads the model (seconds) only
to embed one prompt; the resident process does that once and then answers
each hook over a Unix socket in milliseconds. It serves one home, is started
on demand by the first hook that finds none (that hook answers in process, as
before), and exits after ``MEMORYD_HOOK_RESIDENT_IDLE`` minutes without a
request, so nothing lingers once the user stops working.

Only the hooks that read (``user-prompt``, ``session-start``) go through it;
``MEMORYD_HOOK_RESIDENT=0`` turns it off, and with ``MEMORYD_URL`` set the
hooks talk to that server instead. Failing open still holds: a resident that
does not answer within the event's deadline costs that one hook its
injection (logged), never the prompt.

This module's top level imports the standard library alone: ``memoryd``'s
console script calls :func:`fast_hook` before it loads the command line, so
that a hook with a running resident costs little more than starting Python.
The same fast path hands ``session-end`` to a background process
(:mod:`memoryd.hooks.handoff`), within the 1.5 seconds Claude Code gives it.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from memoryd.hooks import handoff
from memoryd.hooks.handoff import HANDED_OFF

# the hooks the resident answers, and how long a caller waits (runner.EVENTS' deadlines)
DEADLINES_S = {"user-prompt": 7.0, "session-start": 12.0}
ENV_RESIDENT = "MEMORYD_HOOK_RESIDENT"
ENV_IDLE = "MEMORYD_HOOK_RESIDENT_IDLE"
DEFAULT_IDLE_MIN = 30.0
MAX_IDLE_MIN = 24 * 60.0
# what a hook reads from stdin at most (runner.MAX_STDIN_BYTES), and a reply's bound
MAX_REQUEST_BYTES = 8 * 1024 * 1024 + 4096
MAX_REPLY_BYTES = 16 * 1024 * 1024
CONNECT_TIMEOUT_S = 0.5
# the variables a hook's own settings come from (hooks.config reads them per call)
FORWARDED_ENV = ("MEMORYD_",)
REMOTE_ENV = ("MEMORYD_URL", "OMEM_API_URL")


class NotRunning(Exception):
    """No resident process answers for this home."""


def enabled(environ: Mapping[str, str]) -> bool:
    """On unless turned off, or a server is configured (the hooks then talk to it)."""
    if any(environ.get(name, "").strip() for name in REMOTE_ENV):
        return False
    if not hasattr(socket, "AF_UNIX"):
        return False
    return environ.get(ENV_RESIDENT, "").strip().lower() not in ("0", "false", "no", "off")


def idle_minutes(environ: Mapping[str, str]) -> float:
    """Minutes without a request before the resident exits; a bad value means the default."""
    raw = environ.get(ENV_IDLE, "").strip()
    try:
        value = float(raw) if raw else DEFAULT_IDLE_MIN
    except ValueError:
        return DEFAULT_IDLE_MIN
    return value if 0 < value <= MAX_IDLE_MIN else DEFAULT_IDLE_MIN


def socket_path(home: Path) -> Path:
    """The home's socket, in a directory of this user's (a socket path must stay short).

    ``$XDG_RUNTIME_DIR`` when set (per user, mode 0700 by the system), else a
    ``memoryd-<uid>`` folder in the temporary directory, made 0700.
    """
    digest = hashlib.sha256(str(home.expanduser().resolve()).encode()).hexdigest()[:24]
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and Path(runtime).is_dir():
        folder = Path(runtime) / "memoryd"
    else:
        uid = os.getuid() if hasattr(os, "getuid") else 0
        folder = Path(tempfile.gettempdir()) / f"memoryd-{uid}"
    return folder / f"hooks-{digest}.sock"


def connect(home: Path) -> socket.socket:
    """A connection to the home's resident; ``NotRunning`` when none answers."""
    path = socket_path(home)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(CONNECT_TIMEOUT_S)
    try:
        sock.connect(str(path))
    except OSError as exc:
        sock.close()
        raise NotRunning(f"no resident process at {path}: {exc.strerror or exc}") from None
    return sock


def is_running(home: Path) -> bool:
    try:
        connect(home).close()
    except NotRunning:
        return False
    return True


def ask(
    sock: socket.socket,
    command: str,
    payload: bytes,
    environ: Mapping[str, str],
    timeout_s: float,
) -> dict[str, Any] | None:
    """Send one hook to the resident on ``sock``; its hook JSON (None: nothing to say).

    ``OSError`` (a timeout included) or ``ValueError`` when the resident does
    not answer properly within ``timeout_s``.
    """
    request = {
        "command": command,
        "payload": payload.decode("utf-8", errors="replace"),
        "env": {k: v for k, v in environ.items() if k.startswith(FORWARDED_ENV)},
    }
    sock.settimeout(timeout_s)
    with sock:
        sock.sendall(json.dumps(request, ensure_ascii=False).encode("utf-8") + b"\n")
        reply = sock.makefile("rb").readline(MAX_REPLY_BYTES)
    if not reply.endswith(b"\n"):
        raise ValueError("the resident process closed the connection without an answer")
    answer = json.loads(reply)
    if not isinstance(answer, dict) or "output" not in answer:
        raise ValueError(f"the resident process answered {reply[:200]!r}")
    output = answer["output"]
    return output if isinstance(output, dict) else None


def stop(home: Path) -> bool:
    """Ask the home's resident to exit; False when none was running."""
    try:
        sock = connect(home)
    except NotRunning:
        return False
    with sock:
        sock.sendall(b'{"command": "stop"}\n')
        sock.makefile("rb").readline(MAX_REPLY_BYTES)
    return True


# ---------------------------------------------------------------------- the console script
def _hook_command(args: list[str]) -> tuple[str, Path | None] | None:
    """``[--home DIR] hook COMMAND`` for a command of the fast path (the ones the resident
    answers, and the ones handed off); else None."""
    home: Path | None = None
    rest = list(args)
    if rest and rest[0].startswith("--home="):
        home, rest = Path(rest[0].split("=", 1)[1]).expanduser(), rest[1:]
    elif len(rest) >= 2 and rest[0] == "--home":
        home, rest = Path(rest[1]).expanduser(), rest[2:]
    if len(rest) == 2 and rest[0] == "hook" and rest[1] in (*DEADLINES_S, *HANDED_OFF):
        return rest[1], home
    return None


def fast_hook(args: list[str]) -> int | None:
    """Answer ``memoryd hook user-prompt`` (or ``session-start``) through the resident, and
    hand ``memoryd hook session-end`` to a background process.

    None when the command is not one of those, or the resident is off or
    not running: the caller then runs the command line, which answers in
    process and starts the resident for the next hook. Otherwise the hook is
    answered (or, past its deadline, given up and logged) and the exit code
    is 0, as for every hook. A session start through the resident also
    starts the background process for records a session end left waiting.
    """
    found = _hook_command(args)
    if found is None:
        return None
    command, home = found
    from memoryd.home import default_home

    home = home or default_home()
    if sys.stdin.isatty():
        return None  # typed at a terminal: the command line says what it does
    if command in HANDED_OFF:
        problem = handoff.hand_off_stdin(command, home)
        if problem is not None:
            _log(home, f"{command}: {problem}; the session's checkpoint is not saved")
        return 0
    if not enabled(os.environ):
        return None
    try:
        sock = connect(home)
    except NotRunning:
        return None
    if command == "session-start":
        handoff.resume(home)
    started = time.monotonic()
    try:
        payload = sys.stdin.buffer.read(MAX_REQUEST_BYTES)
        output = ask(sock, command, payload, os.environ, DEADLINES_S[command])
    except (OSError, ValueError) as exc:
        _log(home, f"{command}: the resident process did not answer ({exc}); nothing injected")
        return 0
    if output is not None:
        sys.stdout.write(json.dumps(output, ensure_ascii=False) + "\n")
        sys.stdout.flush()
    if time.monotonic() - started > DEADLINES_S[command] / 2:
        _log(home, f"{command}: the resident process took {time.monotonic() - started:.2f}s")
    return 0


def _log(home: Path, message: str) -> None:
    """A warning in the hook log (loads the hook machinery: only when something went wrong)."""
    import logging

    from memoryd.hooks.config import HookConfig
    from memoryd.hooks.log import start_log

    stop_log = start_log(HookConfig.from_env(home=home))
    logging.getLogger("memoryd.hooks.resident").warning("%s", message)
    stop_log()
