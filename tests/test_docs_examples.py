"""The examples the docs mark runnable run as pasted, in a new home, offline.

A fenced ``python`` or ``sh`` block right after a mark line in README.md or
docs/*.md is run as a reader would paste it: Python with the project's
interpreter, a shell block with ``bash -euo pipefail`` and ``memoryd`` on the
PATH. Each runs in an empty folder of its own, with an empty ``HOME`` (so the
default memoryd home, ``~/.local/share/memoryd``, is new too) and no network.
A block that raises, or a command that exits non-zero, fails here with the
page and line it came from.

The mark says what the example needs besides memoryd itself:

``<!-- runnable -->``
    nothing: the embedded store in the new home.
``<!-- runnable: server -->``
    a running memoryd server. One real ``memoryd serve`` on a free loopback
    port, with a home of its own, serves every such example of the run; each
    example gets a tenant of its own and finds the server's address in
    ``MEMORYD_URL`` and its key in ``MEMORYD_API_KEY``. The server's chat
    upstream (``MEMORYD_UPSTREAM_URL``, for the memory proxy) is the scripted
    model below.
``<!-- runnable: llm -->``
    a chat model: ``OPENAI_BASE_URL`` and ``OPENAI_API_KEY`` name the scripted
    model, which every OpenAI client (and the frameworks built on one) reads.

``<!-- runnable: server llm -->`` gives both. The scripted model
(``tests/llm/scripted_upstream.py``) is the only stand-in: it answers every
chat request with one short sentence, in the OpenAI chat, OpenAI Responses and
Anthropic formats, streamed or not. Everything else is the real thing.

The hooks' resident process is turned off (``MEMORYD_HOOK_RESIDENT=0``), so
that no example leaves a process behind it.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "llm"))  # the scripted model lives beside its tests

from scripted_upstream import ScriptedUpstream  # type: ignore[import-not-found]  # noqa: E402

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
MARK = re.compile(r"^<!-- runnable(?::\s*(?P<needs>[a-z ]+?))?\s*-->$")
NEEDS = {"server", "llm"}
BLOCK = re.compile(r"^```(python|sh)\n(.*?)^```", re.S | re.M)
LINK = re.compile(r"\]\(([^)\s]+)\)")
FENCED = re.compile(r"^```.*?^```", re.S | re.M)
INLINE = re.compile(r"`[^`\n]*`")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*$", re.M)
RUN_TIMEOUT_S = 180
SERVER_START_TIMEOUT_S = 90
ANSWER = "Noted, thank you."
RESPONSES_PATH = "/v1/responses"
# what the machine's environment must not lend an example: its own memoryd, its keys
FOREIGN = ("MEMORYD_", "OMEM_", "OPENAI_", "ANTHROPIC_", "XDG_")


@dataclass(frozen=True)
class Example:
    page: Path
    line: int
    language: str
    code: str
    needs: frozenset[str]

    def __str__(self) -> str:
        return f"{self.page.name}:{self.line}"


def marks(text: str) -> Iterator[tuple[int, frozenset[str]]]:
    """(offset of the line after the mark, what it needs) for each mark of a page."""
    offset = 0
    for line in text.splitlines(keepends=True):
        offset += len(line)
        found = MARK.match(line.strip())
        if found:
            yield offset, frozenset((found["needs"] or "").split())


def examples() -> list[Example]:
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for after, needs in marks(text):
            block = BLOCK.match(text, after)
            if block:
                line = text[:after].count("\n") + 1
                found.append(Example(page, line, block[1], block[2], needs))
    return found


def test_the_docs_mark_examples_to_run() -> None:
    pages = {e.page.name for e in examples()}
    assert "README.md" in pages
    assert len(pages) > 10, pages


def test_every_mark_sits_on_an_example_and_names_what_exists() -> None:
    """A mark that a blank line, a typo or another language parts from its block would
    quietly run nothing."""
    wrong = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for after, needs in marks(text):
            line = text[:after].count("\n")
            if not BLOCK.match(text, after):
                wrong.append(f"{page.name}:{line}: no ```python or ```sh block right after")
            if needs - NEEDS:
                wrong.append(f"{page.name}:{line}: unknown needs {sorted(needs - NEEDS)}")
        unmarked = text.count("<!-- runnable") - len(list(marks(text)))
        if unmarked:
            wrong.append(f"{page.name}: {unmarked} mark(s) not alone on their line")
    assert not wrong, "\n".join(wrong)


def anchors(page: Path) -> set[str]:
    """The fragments a page's headings answer to, as GitHub makes them."""
    found: set[str] = set()
    for title in HEADING.findall(FENCED.sub("", page.read_text(encoding="utf-8"))):
        slug = re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-")
        repeat = 0
        while (f"{slug}-{repeat}" if repeat else slug) in found:
            repeat += 1
        found.add(f"{slug}-{repeat}" if repeat else slug)
    return found


def test_every_link_between_pages_resolves() -> None:
    """A moved section leaves no link behind: each relative link names a file that
    exists and, into a page, a heading that page has."""
    broken = []
    for page in PAGES:
        text = INLINE.sub("", FENCED.sub("", page.read_text(encoding="utf-8")))
        for target in LINK.findall(text):
            if re.match(r"[a-z]+:", target):
                continue  # http:, https:, mailto:
            path, _, fragment = target.partition("#")
            dest = (page.parent / path).resolve() if path else page
            if not dest.exists():
                broken.append(f"{page.name}: {target}: no such file")
            elif fragment and dest.suffix == ".md" and fragment not in anchors(dest):
                broken.append(f"{page.name}: {target}: no such heading")
    assert not broken, "\n".join(broken)


class DocsModel(ScriptedUpstream):  # type: ignore[misc]
    """The scripted upstream, answering ``POST /v1/responses`` too (the OpenAI Agents
    SDK and Pydantic AI call OpenAI's Responses API by default)."""

    def __init__(self) -> None:
        super().__init__()
        self.responder = lambda request: ANSWER

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        chat: type[Any] = super()._handler()

        class Handler(chat):  # type: ignore[misc]
            def do_POST(self) -> None:
                if self.path.partition("?")[0] != RESPONSES_PATH:
                    super().do_POST()
                    return
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                self._send(200, json.dumps(_response(str(body.get("model", "scripted")))).encode())

        return Handler


def _response(model: str) -> dict[str, Any]:
    """A finished Responses API answer: one assistant message saying ``ANSWER``."""
    text = {"type": "output_text", "text": ANSWER, "annotations": []}
    message = {
        "type": "message",
        "id": "msg_scripted",
        "status": "completed",
        "role": "assistant",
        "content": [text],
    }
    usage = {
        "input_tokens": 11,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 7,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 18,
    }
    return {
        "id": "resp_scripted",
        "object": "response",
        "created_at": 0,
        "model": model,
        "status": "completed",
        "output": [message],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": usage,
        "error": None,
        "incomplete_details": None,
    }


@pytest.fixture(scope="module")
def model() -> Iterator[str]:
    """The scripted model's base URL (ending in ``/v1``)."""
    stand_in = DocsModel()
    yield str(stand_in.url)
    stand_in.stop()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, model: str) -> Iterator[str]:
    """One real ``memoryd serve`` for the run's server examples: its base URL."""
    home = tmp_path_factory.mktemp("docs-server") / "home"
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = clean_environment(home.parent)
    env.update(
        MEMORYD_UPSTREAM_URL=model,
        MEMORYD_UPSTREAM_API_KEY="scripted",
        MEMORYD_HOOK_RESIDENT="0",
        PYTHONUNBUFFERED="1",
    )
    command = [sys.executable, "-m", "memoryd.cli", "--home", str(home), "serve"]
    log = home.parent / "serve.log"  # a file, not a pipe: a full pipe would stall the server
    with log.open("w") as out:
        process = subprocess.Popen(
            [*command, "--port", str(port)], stdout=out, stderr=subprocess.STDOUT, env=env
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + SERVER_START_TIMEOUT_S
        while not answers(url):
            assert process.poll() is None, log.read_text()
            assert time.monotonic() < deadline, f"no answer on /health\n{log.read_text()}"
            time.sleep(0.2)
        yield url
    finally:
        process.send_signal(signal.SIGINT)  # as a person stops it
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def answers(url: str) -> bool:
    try:
        return httpx.get(f"{url}/health", timeout=1).status_code == 200
    except httpx.HTTPError:
        return False


def clean_environment(home: Path) -> dict[str, str]:
    """This process's environment less anything memoryd or a model client would read,
    with ``home`` as the user's home."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(FOREIGN)}
    bin_dir = str(Path(sys.executable).parent)
    env.update(
        HOME=str(home),
        HF_HUB_OFFLINE="1",
        PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}",
        COLUMNS="120",
    )
    return env


def new_tenant(url: str, name: str) -> str:
    """The API key of a new tenant of the server, made as the docs make one."""
    response = httpx.post(f"{url}/v1/tenants", json={"name": name}, timeout=30)
    assert response.status_code == 200, response.text
    key: str = response.json()["api_key"]
    return key


@pytest.mark.parametrize("example", examples(), ids=str)
def test_a_runnable_example_runs_as_pasted(
    example: Example, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    env = clean_environment(tmp_path / "home")
    env["MEMORYD_HOOK_RESIDENT"] = "0"
    if "server" in example.needs:
        url: str = request.getfixturevalue("server")
        env.update(MEMORYD_URL=url, MEMORYD_API_KEY=new_tenant(url, str(example)))
    if "llm" in example.needs:
        env.update(OPENAI_BASE_URL=request.getfixturevalue("model"), OPENAI_API_KEY="scripted")
    if example.language == "python":
        command = [sys.executable, "-c", example.code]
    else:
        command = ["bash", "-euo", "pipefail", "-c", example.code]
    ran = subprocess.run(
        command,
        cwd=work,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
    )
    assert ran.returncode == 0, f"{example}\n{ran.stdout[-3000:]}\n{ran.stderr[-3000:]}"
