"""The real Claude Code CLI as the host tests drive it: a home of its own, a scripted model.

``claude`` is the pinned CLI ``build_plugins`` installs in ``integrations/hosts``.
Each test gives it a fresh ``HOME`` (and config folder), the scripted model
as its Anthropic API (``ANTHROPIC_BASE_URL``, a dummy key, no traffic but
that), and installs the memoryd plugin the way docs/claude-code.md tells a
user to: the repository as a marketplace, then ``claude plugin install``.
The plugin's hooks run the ``memoryd`` of this virtual environment (first on
``PATH``) against a tenant of the hosts' memoryd server.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from build_plugins import HOSTS, node_env
from hosts_harness import Tenant
from scripted_upstream import ScriptedUpstream

ROOT = Path(__file__).resolve().parents[2]
CLAUDE = HOSTS / "node_modules" / ".bin" / "claude"
VERSION = "2.1.328"
# what may reach the CLI from the machine running the tests: none of these
FOREIGN = ("ANTHROPIC_", "CLAUDE_", "MEMORYD_", "OMEM_")
COMMAND_TIMEOUT_S = 60
CONTEXT = re.compile(r"<memoryd-context>.*?</memoryd-context>", re.DOTALL)


class AnthropicUpstream(ScriptedUpstream):
    """The scripted upstream as Claude Code calls it: ``POST /v1/messages?beta=true``."""

    @property
    def base_url(self) -> str:
        """``ANTHROPIC_BASE_URL``: the CLI adds ``/v1/messages`` itself."""
        return self.url.removesuffix("/v1")


@dataclass
class Run:
    code: int
    out: str
    err: str
    seconds: float


class ClaudeCode:
    """The CLI in a home of its own, with the memoryd plugin installed there."""

    def __init__(self, root: Path, upstream: AnthropicUpstream, tenant: Tenant) -> None:
        self.home = root / "home"
        self.memoryd_home = root / "memoryd"
        self.project = root / "project"
        for folder in (self.home, self.memoryd_home, self.project):
            folder.mkdir(parents=True, exist_ok=True)
        own = {
            "HOME": str(self.home),
            "CLAUDE_CONFIG_DIR": str(self.home / ".claude"),
            "XDG_CONFIG_HOME": str(self.home / ".config"),
            "XDG_DATA_HOME": str(self.home / ".local" / "share"),
            "ANTHROPIC_BASE_URL": upstream.base_url,
            "ANTHROPIC_API_KEY": "sk-ant-scripted",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "MEMORYD_URL": tenant.url,
            "MEMORYD_API_KEY": tenant.key,
            "MEMORYD_HOME": str(self.memoryd_home),
        }
        env = node_env(**own)  # loopback only, no proxy of the machine
        self.env = {k: v for k, v in env.items() if not k.startswith(FOREIGN) or k in own}
        # the hooks' and the MCP server's `memoryd`: this virtual environment's
        self.env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env["PATH"]])

    def command(self, *args: str, timeout_s: float = COMMAND_TIMEOUT_S) -> Run:
        started = time.monotonic()
        proc = subprocess.run(
            [str(CLAUDE), *args],
            cwd=self.project,
            env=self.env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout_s,
        )
        return Run(
            proc.returncode,
            proc.stdout.decode(errors="replace"),
            proc.stderr.decode(errors="replace"),
            time.monotonic() - started,
        )

    def install_plugin(self) -> None:
        """As docs/claude-code.md says: the repository as a marketplace, then the plugin."""
        for args in (
            ("plugin", "marketplace", "add", str(ROOT)),
            ("plugin", "install", "memoryd@memoryd"),
        ):
            ran = self.command(*args)
            assert ran.code == 0, (args, ran.out, ran.err)

    def print_session(self, prompt: str, session: str, timeout_s: float) -> tuple[Run, str]:
        """``claude -p PROMPT`` as session ``session``: the run and the CLI's debug log."""
        debug = self.home / f"debug-{session}.log"
        ran = self.command(
            "-p", prompt, "--session-id", session, "--debug-file", str(debug), timeout_s=timeout_s
        )
        return ran, debug.read_text(encoding="utf-8") if debug.exists() else ""

    def hook_log(self) -> str:
        path = self.memoryd_home / "logs" / "hooks.log"
        return path.read_text(encoding="utf-8") if path.exists() else ""


# how the CLI's debug log (``--debug-file``) reports a plugin's command hook that ended
HOOK_FINISHED = re.compile(
    r"Hooks: (?P<event>\w+)(?::\w+)? \[(?P<command>[^\]]+)\] \(plugin [^)]*\) "
    r"finished with status (?P<status>\d+) \((?P<ms>\d+)ms\)"
)
SESSION_END = re.compile(r"SessionEnd:\w+ \[(?P<command>[^\]]+)\] (?P<outcome>.+)$", re.MULTILINE)


@dataclass
class HookRun:
    event: str
    command: str
    outcome: str  # "status 0", or what the CLI says instead ("cancelled" …)
    ms: int | None  # the CLI does not time SessionEnd hooks


def hook_runs(debug_log: str) -> list[HookRun]:
    """The command hooks the CLI ran in one session, in order, from its debug log."""
    runs = [
        (m.start(), HookRun(m["event"], m["command"], f"status {m['status']}", int(m["ms"])))
        for m in HOOK_FINISHED.finditer(debug_log)
    ]
    for m in SESSION_END.finditer(debug_log):
        said = m["outcome"].strip()
        outcome = said.removeprefix("completed with ") if said.startswith("completed") else said
        runs.append((m.start(), HookRun("SessionEnd", m["command"], outcome, None)))
    return [run for _, run in sorted(runs, key=lambda pair: pair[0])]


def texts(body: dict[str, Any]) -> str:
    """Every text a request carries: its system prompt and its messages, in order."""
    parts: list[str] = []

    def add(content: Any) -> None:
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            for block in content:
                if isinstance(block, dict) and isinstance(block.get("text"), str):
                    parts.append(block["text"])
                elif isinstance(block, dict) and "content" in block:
                    add(block["content"])

    add(body.get("system"))
    for message in body.get("messages") or []:
        add(message.get("content"))
    return "\n".join(parts)


def is_agent_request(body: dict[str, Any]) -> bool:
    """The agent's own turn (it offers the tools), not a side request of the CLI."""
    return bool(body.get("tools")) and bool(body.get("messages"))
