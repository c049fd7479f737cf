"""OpenCode itself, offline: the pinned ``opencode`` CLI, the memoryd plugin, a scripted model.

Each :class:`OpenCode` is a user of its own: a fresh HOME and XDG folders, a
project folder to run in, and one config (``OPENCODE_CONFIG``) that loads the
plugin from the built ``integrations/opencode`` (``file://``, with the
tenant's ``apiUrl`` and ``apiKey``) and names one model, ``scripted/scripted-1``,
of an OpenAI-compatible provider whose ``baseURL`` is the scripted server.
``@ai-sdk/openai-compatible`` is bundled in the OpenCode binary, so no
provider package is installed at run time.

Nothing but loopback is reached:

* OpenCode's own fetches are switched off (``OPENCODE_DISABLE_MODELS_FETCH``,
  ``…_AUTOUPDATE``, ``…_LSP_DOWNLOAD``, ``…_SHARE``, ``…_DEFAULT_PLUGINS``);
* OpenCode installs ``@opencode-ai/plugin`` into its config folder for the
  plugins it finds there, from the registry, unless that folder's
  ``node_modules`` and lock already name it: the folder is seeded with both,
  the package linked from ``integrations/node_modules`` (the version the
  plugin is built against);
* every HTTP(S) proxy variable points at :class:`NetworkTrap`, a loopback
  port that counts connections and closes them, with loopback exempt
  (``NO_PROXY``), so whatever else would go out is seen and fails at once.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from build_plugins import ROOT, node_env
from scripted_upstream import ScriptedUpstream, StreamReply, _sse

OPENCODE = ROOT / "hosts" / "node_modules" / ".bin" / "opencode"
PLUGIN = ROOT / "opencode"
PLUGIN_SDK = ROOT / "node_modules" / "@opencode-ai" / "plugin"
PROVIDER = "scripted"
MODEL = "scripted-1"
RUN_TIMEOUT_S = 60  # one `opencode run` takes seconds; the limit only stops a hang


class NetworkTrap:
    """A loopback port standing in for a proxy: it counts the connections to it and closes them."""

    def __init__(self) -> None:
        self.connections = 0
        self._socket = socket.socket()
        self._socket.bind(("127.0.0.1", 0))
        self._socket.listen()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._socket.getsockname()[1]}"

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self._socket.accept()
            except OSError:
                return  # closed
            self.connections += 1
            connection.close()

    def close(self) -> None:
        self._socket.close()


@dataclass
class Run:
    code: int
    out: str
    err: str
    seconds: float


class OpenCode:
    """``run(message)`` is ``opencode run MESSAGE`` in the project folder, as a user types it."""

    def __init__(self, folder: Path, llm_url: str, plugin_options: dict[str, Any], trap: str):
        self.home = folder / "home"
        self.project = folder / "project"
        self.project.mkdir(parents=True)
        config_dir = self.home / ".config" / "opencode"
        seed_config_dir(config_dir)
        config = folder / "opencode.json"
        config.write_text(json.dumps(opencode_config(llm_url, plugin_options)))
        self.env = node_env(
            HOME=str(self.home),
            PWD=str(self.project),  # `opencode run` works in $PWD, not the process's folder
            XDG_CONFIG_HOME=str(self.home / ".config"),
            XDG_DATA_HOME=str(self.home / ".local" / "share"),
            XDG_CACHE_HOME=str(self.home / ".cache"),
            XDG_STATE_HOME=str(self.home / ".local" / "state"),
            OPENCODE_CONFIG=str(config),
            OPENCODE_DISABLE_MODELS_FETCH="1",
            OPENCODE_DISABLE_AUTOUPDATE="1",
            OPENCODE_DISABLE_LSP_DOWNLOAD="1",
            OPENCODE_DISABLE_SHARE="1",
            OPENCODE_DISABLE_DEFAULT_PLUGINS="1",
            OPENCODE_DISABLE_CLAUDE_CODE="1",
            HTTP_PROXY=trap,
            HTTPS_PROXY=trap,
            ALL_PROXY=trap,
            http_proxy=trap,
            https_proxy=trap,
            all_proxy=trap,
        )
        for name in ("OPENCODE", "OPENCODE_SERVER_PASSWORD", "MEMORYD_URL", "MEMORYD_API_KEY"):
            self.env.pop(name, None)

    def run(self, message: str, *args: str) -> Run:
        started = time.monotonic()
        ran = subprocess.run(
            [str(OPENCODE), "run", *args, message],
            cwd=self.project,
            env=self.env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=RUN_TIMEOUT_S,
        )
        seconds = time.monotonic() - started
        print(f"opencode run {message[:30]!r}: {seconds:.1f}s")
        return Run(
            ran.returncode, _plain(ran.stdout.decode()), _plain(ran.stderr.decode()), seconds
        )

    def log(self) -> str:
        """OpenCode's own log files, for a failure's message."""
        folder = self.home / ".local" / "share" / "opencode" / "log"
        return "\n".join(
            p.read_text(errors="replace")[-4000:] for p in sorted(folder.glob("*.log"))
        )


def opencode_config(llm_url: str, plugin_options: dict[str, Any]) -> dict[str, Any]:
    return {
        "$schema": "https://opencode.ai/config.json",
        "model": f"{PROVIDER}/{MODEL}",
        "provider": {
            PROVIDER: {
                "npm": "@ai-sdk/openai-compatible",
                "name": "Scripted",
                "options": {"baseURL": llm_url, "apiKey": "sk-scripted"},
                "models": {MODEL: {"name": "Scripted", "tool_call": True}},
            }
        },
        "plugin": [[PLUGIN.as_uri(), plugin_options]],
        "autoupdate": False,
        "share": "disabled",
    }


def seed_config_dir(folder: Path) -> None:
    """The config folder as OpenCode leaves it after installing ``@opencode-ai/plugin``."""
    (folder / "node_modules" / "@opencode-ai").mkdir(parents=True)
    version = json.loads((PLUGIN_SDK / "package.json").read_text())["version"]
    dependencies = {"@opencode-ai/plugin": version}
    (folder / "package.json").write_text(json.dumps({"dependencies": dependencies}))
    lock = {"lockfileVersion": 3, "packages": {"": {"dependencies": dependencies}}}
    (folder / "package-lock.json").write_text(json.dumps(lock))
    os.symlink(PLUGIN_SDK, folder / "node_modules" / "@opencode-ai" / "plugin")


@dataclass
class ToolCall(StreamReply):
    """A streamed answer that calls one tool (OpenAI's ``tool_calls`` deltas)."""

    tool: str = ""
    arguments: dict[str, Any] | None = None


def tool_call_events(reply: ToolCall, model: str) -> list[bytes]:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return _sse(
            {
                "id": "chatcmpl-scripted",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": model,
                "choices": [choice],
            }
        )

    call = {
        "index": 0,
        "id": "call_scripted_1",
        "type": "function",
        "function": {"name": reply.tool, "arguments": json.dumps(reply.arguments or {})},
    }
    return [
        chunk({"role": "assistant", "content": None, "tool_calls": [call]}),
        chunk({}, "tool_calls"),
        b"data: [DONE]\n\n",
    ]


class OpenCodeUpstream(ScriptedUpstream):
    """The scripted model, whose streamed answers may call a tool (OpenCode streams them all)."""

    def _handler(self) -> Any:
        base: Any = super()._handler()

        class Handler(base):  # type: ignore[misc]
            def _stream(self, reply: StreamReply, events: list[bytes]) -> None:
                if isinstance(reply, ToolCall):
                    events = tool_call_events(reply, "scripted")
                super()._stream(reply, events)

        return Handler


def _plain(text: str) -> str:
    return re.sub(r"\x1b\[[0-9;]*m", "", text)
