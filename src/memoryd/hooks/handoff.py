"""SessionEnd handed to a background process: written down first, then done after the host exits.

Claude Code gives the ``SessionEnd`` hooks of a session 1.5 seconds in all
(``CLAUDE_CODE_SESSIONEND_HOOKS_TIMEOUT_MS`` raises it; a plugin's own
``timeout`` does not), in print mode (``claude -p``) as interactively, and
cancels what still runs then: the hook process and every process under it.
Starting Python, loading memoryd and saving a checkpoint can take longer
than that on a busy machine, so the hook does not do the work itself. It
writes the hook's input to a file in the home's ``pending-hooks`` folder
(``<home>/pending-hooks``, mode 0700), starts ``memoryd hook handed-off``
detached (a session of its own, stdin and stdout not tied to the hook) and
exits: tens of milliseconds, with this module's standard-library imports
only. The detached process saves the checkpoint, asks for its summary and
consolidates the session, then removes the file.

The file is what makes this durable: a background process that never ran
or was killed (the machine shut down, a container ended with the CLI)
leaves it behind, and the next ``session-start`` hook of the home starts
another one for it. A file whose save failed for a reason that may pass (a
server down, a locked database) stays for the next try; after
``MAX_AGE_S`` it is dropped, with a line in the hook log. Two background
processes never handle one file: each takes an exclusive lock on it first.

A record holds the hook's input and the settings of the hook's environment
that name the store and the agent (``MEMORYD_URL`` or ``OMEM_API_URL``,
``MEMORYD_AGENT_ID``, ``MEMORYD_HOOK_HTTP_TIMEOUT``), so that a later try
reaches the same store as the session did. No key is written down: a later
try takes it from its own environment.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from memoryd.hooks.detach import spawn_memoryd

log = logging.getLogger(__name__)

# the hooks whose work is handed off
HANDED_OFF = ("session-end",)
FOLDER = "pending-hooks"
SUFFIX = ".json"
# what a hook reads from stdin at most (runner.MAX_STDIN_BYTES)
MAX_PAYLOAD_BYTES = 8 * 1024 * 1024
# the settings a record keeps: which store, as which agent (hooks.config's names; no key)
RECORDED = ("MEMORYD_URL", "OMEM_API_URL", "MEMORYD_AGENT_ID", "MEMORYD_HOOK_HTTP_TIMEOUT")
# a record no background process took within this is started again by the next session start
RETRY_AFTER_S = 60.0
# a record that still fails after this is dropped
MAX_AGE_S = 3 * 24 * 3600.0
WORKER_ARGS = ["hook", "handed-off"]


def folder(home: Path) -> Path:
    return home / FOLDER


def settings_of(environ: Mapping[str, str]) -> dict[str, str]:
    """The settings of a hook's environment that say which store it used, and as whom."""
    return {k: environ[k] for k in RECORDED if environ.get(k, "").strip()}


def environment(record_env: Mapping[str, str], environ: Mapping[str, str]) -> dict[str, str]:
    """``environ`` with the record's settings in place of its own (its keys kept)."""
    return {**{k: v for k, v in environ.items() if k not in RECORDED}, **record_env}


def write(home: Path, command: str, data: bytes, environ: Mapping[str, str]) -> Path:
    """Write one record atomically (a reader never sees half of it); ``OSError`` if it cannot."""
    where = folder(home)
    where.mkdir(mode=0o700, parents=True, exist_ok=True)
    record = {
        "command": command,
        "created": time.time(),
        "payload": data.decode("utf-8", errors="replace"),
        "env": settings_of(environ),
    }
    name = f"{time.time_ns()}-{os.getpid()}-{command}{SUFFIX}"
    fd, temporary = tempfile.mkstemp(prefix=".", suffix=".tmp", dir=where)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(record, handle, ensure_ascii=False)
        os.replace(temporary, where / name)
    except BaseException:
        with suppress(OSError):
            os.unlink(temporary)
        raise
    return where / name


def hand_off(home: Path, command: str, data: bytes, environ: Mapping[str, str]) -> Path:
    """Write the hook down and start the background process; ``OSError`` when nothing was
    written. A process that cannot be started leaves the record for the next session start."""
    path = write(home, command, data, environ)
    with suppress(OSError):
        spawn_memoryd(WORKER_ARGS, home)
    return path


def hand_off_stdin(command: str, home: Path, stdin: BinaryIO | None = None) -> str | None:
    """The console script's fast path: the hook's stdin handed off; None, or why it failed."""
    source = stdin if stdin is not None else sys.stdin.buffer
    try:
        data = source.read(MAX_PAYLOAD_BYTES + 1)
        if len(data) > MAX_PAYLOAD_BYTES:
            return f"hook input is over {MAX_PAYLOAD_BYTES} bytes: ignored"
        hand_off(home, command, data, os.environ)
    except OSError as exc:
        return f"cannot write the hook down in {folder(home)}: {exc}"
    return None


def _records(home: Path) -> list[Path]:
    try:
        names = sorted(os.listdir(folder(home)))
    except OSError:
        return []
    return [folder(home) / n for n in names if n.endswith(SUFFIX) and not n.startswith(".")]


def _sweep(home: Path) -> None:
    """Remove the half-written files of writers that were killed, once they are old."""
    try:
        names = os.listdir(folder(home))
    except OSError:
        return
    for name in names:
        path = folder(home) / name
        with suppress(OSError):
            if name.startswith(".") and time.time() - path.stat().st_mtime > MAX_AGE_S:
                path.unlink()


def _lock(handle: Any) -> bool:
    """An exclusive lock on an open record, without waiting; False when another holds it."""
    try:
        import fcntl
    except ImportError:  # no advisory locks (Windows): a record is at worst done twice
        return True
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    return True


def _taken(path: Path) -> bool:
    """Whether a background process holds the record now."""
    try:
        with path.open("rb") as handle:
            return not _lock(handle)  # the lock goes with the handle
    except OSError:
        return True  # gone: done by now


def waiting(home: Path, older_than_s: float = RETRY_AFTER_S) -> list[Path]:
    """Records no background process holds, written more than ``older_than_s`` ago."""
    now = time.time()
    found = []
    for path in _records(home):
        try:
            age = now - path.stat().st_mtime
        except OSError:
            continue
        if age >= older_than_s and not _taken(path):
            found.append(path)
    return found


def resume(home: Path) -> bool:
    """Start a background process when records wait with none to do them (a session start
    calls it); True when one was started."""
    if not waiting(home):
        return False
    try:
        spawn_memoryd(WORKER_ARGS, home)
    except OSError:
        return False
    return True


@dataclass
class Record:
    """A claimed record; set ``done`` (or leave it False for another try later)."""

    path: Path
    command: str
    payload: bytes
    env: dict[str, str]
    age_s: float
    done: bool = False

    @property
    def expired(self) -> bool:
        return self.age_s > MAX_AGE_S


def claim_each(home: Path) -> Iterator[Record]:
    """Each waiting record, locked while the caller handles it; removed once ``done``.

    An unreadable record is removed (it never will be readable); one not
    done stays for another try until it is ``expired``.
    """
    _sweep(home)
    for path in _records(home):
        with _claimed(path) as record:
            if record is None:
                continue
            yield record
            if record.done or record.expired:
                with suppress(OSError):
                    path.unlink()


@contextmanager
def _claimed(path: Path) -> Iterator[Record | None]:
    try:
        handle = path.open("rb")
    except OSError:
        yield None  # done and removed by another process meanwhile
        return
    with handle:
        if not _lock(handle):
            yield None
            return
        try:
            if os.fstat(handle.fileno()).st_nlink == 0:  # removed while this one waited
                yield None
                return
            raw = handle.read()
            age = time.time() - os.fstat(handle.fileno()).st_mtime
        except OSError:
            yield None
            return
        try:
            data = json.loads(raw)
            record = Record(
                path,
                str(data["command"]),
                str(data["payload"]).encode("utf-8"),
                {str(k): str(v) for k, v in dict(data.get("env") or {}).items()},
                age,
            )
        except (ValueError, KeyError, TypeError) as exc:
            log.warning("%s is not a hook record (%s): removed", path.name, exc)
            with suppress(OSError):
                path.unlink()
            yield None
            return
        yield record
