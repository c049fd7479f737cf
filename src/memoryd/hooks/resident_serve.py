"""``memoryd hook resident``: the process that keeps a home warm for the prompt hooks.

Started detached by a hook that found no resident (:mod:`memoryd.hooks.resident`
says why it exists). One per home: an exclusive lock on a file beside the
socket decides, so a burst of hooks that each start one leaves exactly one
running. It opens the home, loads the model and builds the search index
before it listens, so the first hook it answers is as fast as the next;
until then hooks answer in their own process. It answers one hook at a time
(they are milliseconds each), exits after the idle time, when asked to, or
when the database file it opened has been replaced (``memoryd restore``),
and removes its socket on the way out.
"""

from __future__ import annotations

import json
import logging
import os
import socketserver
import threading
import time
from pathlib import Path
from typing import Any

from memoryd.home import default_home
from memoryd.hooks.backend import EmbeddedBackend, host_session
from memoryd.hooks.config import HookConfig
from memoryd.hooks.log import start_log
from memoryd.hooks.resident import DEADLINES_S, MAX_REQUEST_BYTES, socket_path
from memoryd.hooks.runner import EVENTS, parse_payload
from memoryd.sdk import Memory
from memoryd.store import DB_FILENAME

log = logging.getLogger(__name__)

# how often the idle clock is looked at
WATCH_INTERVAL_S = 1.0


class _Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True

    def __init__(self, path: Path, backend: EmbeddedBackend, home: Path, idle_s: float) -> None:
        super().__init__(str(path), _Handler)
        self.backend = backend
        self.home = home
        self.idle_s = idle_s
        self.last_request = time.monotonic()
        self.busy = threading.Lock()  # one hook at a time on the shared store
        self.database = home / DB_FILENAME
        self.inode = self.database.stat().st_ino

    def replaced(self) -> bool:
        """The database file is no longer the one opened (restored, or removed)."""
        try:
            return self.database.stat().st_ino != self.inode
        except OSError:
            return True

    def stop_soon(self, why: str) -> None:
        log.info("resident: stopping (%s)", why)
        threading.Thread(target=self.shutdown, daemon=True).start()

    def watch_idle(self) -> None:
        while True:
            time.sleep(WATCH_INTERVAL_S)
            if time.monotonic() - self.last_request > self.idle_s:
                self.stop_soon(f"idle for {self.idle_s / 60:g} min")
                return


class _Handler(socketserver.StreamRequestHandler):
    server: _Server

    def handle(self) -> None:
        srv = self.server
        srv.last_request = time.monotonic()
        try:
            request = json.loads(self.rfile.readline(MAX_REQUEST_BYTES))
        except ValueError:
            log.warning("resident: a request that is not JSON")
            return self._reply(None)
        command = request.get("command") if isinstance(request, dict) else None
        if command == "stop":
            self._reply(None)
            return srv.stop_soon("asked to")
        if command not in DEADLINES_S:
            log.warning("resident: unknown command %r", command)
            return self._reply(None)
        if srv.replaced():
            self._reply(None)
            return srv.stop_soon(f"{srv.database} was replaced")
        started = time.monotonic()
        env = request.get("env")
        config = HookConfig.from_env(env if isinstance(env, dict) else {}, srv.home)
        payload = parse_payload(str(request.get("payload") or "").encode("utf-8"))
        output = None
        try:
            with srv.busy:
                # as the hooks' agent in the host's session, as open_backend() does
                view = srv.backend.memory.as_agent(config.agent_id, host_session(payload))
                output = EVENTS[command].handler(payload, EmbeddedBackend(view), config).output
        except Exception:
            log.exception("%s failed in the resident process", command)
        log.info("%s: answered by the resident in %.3fs", command, time.monotonic() - started)
        self._reply(output)

    def _reply(self, output: dict[str, Any] | None) -> None:
        try:
            self.wfile.write(json.dumps({"output": output}, ensure_ascii=False).encode() + b"\n")
        except OSError as exc:  # the hook gave up (its deadline) and left
            log.warning("resident: the hook left before its answer: %s", exc)


def serve(home: Path | None, idle_min: float) -> int:
    """Run the resident for ``home`` until idle; 0 also when another one already runs."""
    import fcntl  # POSIX: the resident exists where Unix sockets do

    config = HookConfig.from_env(home=home)
    home = (config.home or default_home()).expanduser()
    stop_log = start_log(config)
    path = socket_path(home)
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        with open(path.with_suffix(".lock"), "a") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                log.info("resident: one already runs for %s", home)
                return 0
            _serve_locked(home, path, idle_min * 60)
    except Exception:
        log.exception("resident for %s failed", home)
    finally:
        stop_log()
    return 0


def _serve_locked(home: Path, path: Path, idle_s: float) -> None:
    with Memory(home) as memory:
        backend = EmbeddedBackend(memory)
        started = time.monotonic()
        backend.search("warm up the model and the index", 1)
        path.unlink(missing_ok=True)  # left by a resident that was killed: the lock is ours
        server = _Server(path, backend, home, idle_s)
        try:
            os.chmod(path, 0o600)
            log.info(
                "resident: serving %s on %s (warm in %.1fs; exits after %g min idle)",
                home,
                path,
                time.monotonic() - started,
                idle_s / 60,
            )
            threading.Thread(target=server.watch_idle, daemon=True).start()
            server.serve_forever(poll_interval=0.5)
        finally:
            server.server_close()
            path.unlink(missing_ok=True)
