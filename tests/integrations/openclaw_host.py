"""The real OpenClaw host, offline: its gateway and its ``agent`` command, from the npm package.

The gateway runs as a process of its own (``openclaw gateway run``) on a free
loopback port, with the memoryd plugin loaded from ``integrations/openclaw``
and its model pointed at the scripted LLM (the one stand-in allowed); every
turn is ``openclaw agent`` through that gateway, as a user would run it.
"""

from __future__ import annotations

import json
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from build_plugins import NODE, ROOT, node_env
from server_harness import free_port

OPENCLAW = ROOT / "node_modules" / "openclaw" / "openclaw.mjs"
PLUGIN = ROOT / "openclaw"
START_TIMEOUT_S = 600  # generous: the gateway loads its bundled runtime on shared cores
TURN_TIMEOUT_S = 300
STOP_TIMEOUT_S = 30


def openclaw_config(
    llm_url: str, port: int, plugin_config: dict[str, Any] | None, log: Path
) -> dict[str, Any]:
    """The gateway's config: loopback, the scripted model, and the plugin loaded from the
    checkout with ``plugin_config`` (``None``: no plugin section, for an install as the
    docs give it)."""
    config = {
        "gateway": {"mode": "local", "port": port, "bind": "loopback", "auth": {"mode": "none"}},
        "logging": {"file": str(log)},
        "models": {
            "mode": "replace",
            "providers": {
                "scripted": {
                    "baseUrl": llm_url,
                    "apiKey": "sk-scripted",
                    "api": "openai-completions",
                    "models": [
                        {
                            "id": "s1",
                            "name": "Scripted",
                            "reasoning": False,
                            "input": ["text"],
                            "contextWindow": 64000,
                            "maxTokens": 1000,
                        }
                    ],
                }
            },
        },
        "agents": {"defaults": {"model": {"primary": "scripted/s1"}}},
    }
    if plugin_config is None:
        return config
    return config | {
        "plugins": {
            # only the plugin under test (and the bundled memory-core the host keeps):
            # no channel, provider or browser plugin starts
            "allow": ["memoryd"],
            "load": {"paths": [str(PLUGIN)]},
            "slots": {"contextEngine": "memoryd", "memory": "memoryd"},
            "entries": {
                "memoryd": {
                    "enabled": True,
                    "hooks": {"allowConversationAccess": True},
                    "config": plugin_config,
                }
            },
        },
    }


@dataclass
class Turn:
    code: int
    out: str
    err: str


class OpenClawGateway:
    """``start()`` the gateway, ``turn()`` for each message, ``stop()`` (SIGTERM) at the end."""

    def __init__(
        self, folder: Path, llm_url: str, plugin_config: dict[str, Any] | None, **env: str
    ):
        folder.mkdir(parents=True, exist_ok=True)
        self.folder = folder
        self.port = free_port()
        self.log = folder / "openclaw.log"
        self.console = folder / "gateway.out"
        config = folder / "openclaw.json"
        config.write_text(json.dumps(openclaw_config(llm_url, self.port, plugin_config, self.log)))
        self.env = node_env(
            HOME=str(folder),
            OPENCLAW_CONFIG_PATH=str(config),
            OPENCLAW_STATE_DIR=str(folder / "state"),
            OPENCLAW_GATEWAY_PORT=str(self.port),
            OPENCLAW_SKIP_CHANNELS="1",
            OPENCLAW_OFFLINE="1",
            OPENCLAW_DISABLE_BONJOUR="1",
            OPENCLAW_NO_AUTO_UPDATE="1",
            **env,
        )
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> OpenClawGateway:
        with self.console.open("wb") as out:
            self.process = subprocess.Popen(
                [str(NODE), str(OPENCLAW), "gateway", "run"],
                env=self.env,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + START_TIMEOUT_S
        while "[gateway] ready" not in self.output():
            assert self.process.poll() is None, self.output()
            assert time.monotonic() < deadline, self.output()
            time.sleep(0.2)
        return self

    def output(self) -> str:
        """What the gateway printed (its console, colours removed)."""
        text = self.console.read_text(encoding="utf-8", errors="replace")
        return _plain(text)

    def turn(self, message: str, session_key: str) -> Turn:
        started = time.monotonic()
        turn = self.cli("agent", "--session-key", session_key, "-m", message)
        print(f"turn {message[:20]!r}: {time.monotonic() - started:.1f}s")
        return turn

    def cli(self, *args: str, cwd: Path | None = None) -> Turn:
        """``openclaw ARGS`` as the user would run it beside this gateway."""
        ran = subprocess.run(
            [str(NODE), str(OPENCLAW), *args],
            env=self.env,
            cwd=cwd,
            capture_output=True,
            timeout=TURN_TIMEOUT_S,
        )
        return Turn(ran.returncode, _plain(ran.stdout.decode()), _plain(ran.stderr.decode()))

    def stop(self) -> str:
        """SIGTERM, as a service manager stops it; returns its console output."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return self.output()


def _plain(text: str) -> str:
    import re

    return re.sub(r"\x1b\[[0-9;]*m", "", text)
