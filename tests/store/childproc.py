"""Real child processes that open the same SQLite home as the test.

A child runs a small JSON-lines driver over the installed package: one command
a line on stdin, one answer a line on stdout (flushed, so a line read by the
parent is a write the child had already acknowledged). The embedder is loaded
once per child.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

DRIVER = r"""
import itertools, json, sys, time
from datetime import datetime, timedelta, timezone

from memoryd.embed.local import LocalEmbedder
from memoryd.errors import MemorydError
from memoryd.service import MemoryService


def out(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


svc = MemoryService(embedder=LocalEmbedder(threads=1))
svc.embedder  # bind (or check) the model before saying ready
out({"ready": True, "home": str(svc.home)})

for line in sys.stdin:
    cmd = json.loads(line)
    op = cmd.pop("op")
    try:
        if op == "exit":
            break
        elif op == "add":
            out({"ok": svc.add(**cmd).id})
        elif op == "add_many":
            ids = []
            for content in cmd["contents"]:
                ids.append(svc.add(content).id)
                time.sleep(cmd.get("pause", 0.0))
            out({"ok": ids})
        elif op == "update":
            out({"ok": svc.update(**cmd).version})
        elif op == "delete":
            svc.delete(cmd["memory_id"])
            out({"ok": True})
        elif op == "get":
            m = svc.get(cmd["memory_id"])
            out({"ok": {"content": m.content, "state": m.state.value}})
        elif op == "search":
            r = svc.search(cmd["query"], touch=False).results
            out({"ok": [[x.memory.id, x.memory.content] for x in r]})
        elif op == "search_until":
            # search in a loop until a result's content holds the needle
            deadline = time.monotonic() + cmd["timeout"]
            loops = 0
            while True:
                loops += 1
                r = svc.search(cmd["query"], touch=False).results
                hits = [x.memory.id for x in r if cmd["needle"] in x.memory.content]
                if hits:
                    out({"ok": hits[0], "loops": loops})
                    break
                if time.monotonic() > deadline:
                    out({"error": "Timeout", "message": f"not seen after {loops} searches"})
                    break
        elif op == "add_loop":
            # never returns: one acknowledged id a line until killed
            for i in itertools.count():
                m = svc.add(cmd["template"].format(i=i))
                out({"ok": m.id, "i": i})
        elif op == "ingest_loop":
            # never returns: one acknowledged batch a line until killed
            base = datetime(2024, 5, 20, 14, 0, tzinfo=timezone.utc)
            for i in itertools.count():
                messages = [
                    {"role": "user", "content": f"batch {i}: my locker number is {1000 + i}"},
                    {"role": "assistant", "content": f"batch {i}: noted, locker {1000 + i}"},
                    {"role": "user", "content": f"batch {i}: and my bike is parked at rack {i}"},
                ]
                r = svc.ingest(
                    messages,
                    session_id=f"crash-{i}",
                    dates=[base + timedelta(minutes=i, seconds=s) for s in range(3)],
                )
                out({"ok": r.memory_ids, "session_id": r.session_id, "i": i})
        else:
            out({"error": "UnknownOp", "message": op})
    except MemorydError as exc:
        out({"error": type(exc).__name__, "message": str(exc)})
svc.close()
"""


class Child:
    """One driver process on ``home``; stdout lines are read by a thread into a queue."""

    def __init__(self, home: Path, workdir: Path, name: str) -> None:
        env = dict(os.environ)
        env["MEMORYD_HOME"] = str(home)
        env.pop("MEMORYD_CONFIG", None)
        env["PYTHONUNBUFFERED"] = "1"
        self.stderr_path = workdir / f"{name}.stderr"
        self._stderr = self.stderr_path.open("w")
        self.proc = subprocess.Popen(
            [sys.executable, "-c", DRIVER],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
            env=env,
            cwd=workdir,
        )
        self._lines: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if line.strip():
                self._lines.put(json.loads(line))
        self._lines.put(None)

    def stderr(self) -> str:
        self._stderr.flush()
        return self.stderr_path.read_text()

    def recv(self, timeout: float = 60.0) -> dict[str, Any]:
        try:
            msg = self._lines.get(timeout=timeout)
        except queue.Empty:
            pytest.fail(f"child said nothing for {timeout}s; stderr:\n{self.stderr()}")
        if msg is None:
            self.proc.wait(timeout=10)
            pytest.fail(f"child exited (rc={self.proc.returncode}); stderr:\n{self.stderr()}")
        return msg

    def wait_ready(self, timeout: float = 60.0) -> None:
        assert self.recv(timeout).get("ready") is True

    def send(self, op: str, **args: Any) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"op": op, **args}) + "\n")
        self.proc.stdin.flush()

    def request(self, op: str, timeout: float = 60.0, **args: Any) -> Any:
        self.send(op, **args)
        reply = self.recv(timeout)
        if "error" in reply:
            pytest.fail(f"child {op} failed: {reply}")
        return reply["ok"]

    def kill(self) -> list[dict[str, Any]]:
        """SIGKILL now; returns the lines the child had flushed but we had not read."""
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=10)
        self._reader.join(timeout=10)
        rest = []
        while True:
            msg = self._lines.get_nowait()
            if msg is None:
                return rest
            rest.append(msg)

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.send("exit")
                self.proc.wait(timeout=20)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait(timeout=10)
        self._stderr.close()
