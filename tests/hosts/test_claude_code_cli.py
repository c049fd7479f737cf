"""The memoryd plugin in the real Claude Code CLI, in print mode, against the hosts' server.

Two ``claude -p`` sessions in one project folder, the plugin installed as
docs/claude-code.md says, the scripted model behind ``ANTHROPIC_BASE_URL``:
the first states facts, the second asks for one. What the model was sent
in the second session (the agent's own request, the one offering tools)
carries the fact in memoryd's blocks from the SessionStart and the
UserPromptSubmit hooks, each block once; neither run reports a cancelled or
failed hook, and each session's SessionEnd checkpoint reaches the server
after the CLI has exited (the hook hands it to a background process).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from claude_cli import (
    CLAUDE,
    CONTEXT,
    VERSION,
    AnthropicUpstream,
    ClaudeCode,
    Run,
    hook_runs,
    is_agent_request,
    texts,
)
from hosts_harness import Tenant
from scripted_llm import Recorded
from scripted_upstream import Captured

FACTS = "Our release codename is Bluefinch, and the billing service deploys to ap-southeast-2."
QUESTION = "What is our release codename?"
NOTED = "Noted: Bluefinch, deployed to ap-southeast-2."
ANSWER = "The release codename is Bluefinch."
# a print run starts the CLI, its MCP server and four hooks: seconds, more on a busy machine
RUN_TIMEOUT_S = 120
# the background process that saves the SessionEnd checkpoint, after the CLI has exited
CHECKPOINT_WAIT_S = 60.0
SESSION_START = "SessionStart hook additional context:"
USER_PROMPT = "UserPromptSubmit hook additional context:"
TROUBLE = ("cancelled", "failed", "error", "timed out", "timeout")


def answer(request: Recorded) -> str:
    """The scripted model: the question of the second session, else the first's statement."""
    messages = request.body.get("messages") or []
    said = texts({"messages": [m for m in messages if m.get("role") == "user"]})
    return ANSWER if QUESTION in said else NOTED


@pytest.fixture(scope="module")
def upstream() -> Iterator[AnthropicUpstream]:
    with AnthropicUpstream() as llm:
        llm.responder = answer
        yield llm


@pytest.fixture(scope="module")
def claude(
    hosts_built: None,
    tenant: Tenant,
    upstream: AnthropicUpstream,
    tmp_path_factory: pytest.TempPathFactory,
) -> ClaudeCode:
    host = ClaudeCode(tmp_path_factory.mktemp("claude-code"), upstream, tenant)
    version = host.command("--version")
    assert version.out.startswith(VERSION), (CLAUDE, version.out, version.err)
    host.install_plugin()
    return host


def print_session(
    claude: ClaudeCode, upstream: AnthropicUpstream, prompt: str
) -> tuple[str, Run, Captured]:
    """One ``claude -p`` session; its id, the run, and the agent's own request to the model."""
    session = str(uuid.uuid4())
    before = len(upstream.chats)
    ran, debug_log = claude.print_session(prompt, session, RUN_TIMEOUT_S)
    assert ran.code == 0, (ran.out, ran.err, claude.hook_log())
    assert_no_hook_trouble(ran, debug_log)
    agent = [c for c in upstream.chats[before:] if is_agent_request(c.body)]
    assert len(agent) == 1, [c.body.get("model") for c in upstream.chats[before:]]
    return session, ran, agent[0]


def assert_no_hook_trouble(ran: Run, debug_log: str) -> None:
    """Nothing about a hook on the CLI's output, and each memoryd hook ran to its end."""
    said = (ran.out + ran.err).lower()
    assert not [word for word in TROUBLE if word in said], (ran.out, ran.err)
    runs = [run for run in hook_runs(debug_log) if run.command.startswith("memoryd hook")]
    assert [(run.event, run.command, run.outcome) for run in runs] == [
        ("SessionStart", "memoryd hook session-start", "status 0"),
        ("UserPromptSubmit", "memoryd hook user-prompt", "status 0"),
        ("Stop", "memoryd hook stop", "status 0"),
        ("SessionEnd", "memoryd hook session-end", "status 0"),
    ], runs


def session_end_checkpoint(tenant: Tenant, session: str) -> dict[str, Any]:
    """The session's checkpoint once its SessionEnd save reached the server."""
    deadline = time.monotonic() + CHECKPOINT_WAIT_S
    found: list[dict[str, Any]] = []
    while time.monotonic() < deadline:
        answer = tenant.http.get(
            "/v1/checkpoints", params={"agent_id": "claude-code", "session_id": session}
        )
        assert answer.status_code == 200, answer.text
        found = answer.json()["checkpoints"]
        if found and found[0]["trigger"] == "session_end":
            return dict(found[0])
        time.sleep(0.2)
    raise AssertionError(f"no SessionEnd checkpoint of session {session}: {found}")


def logged(claude: ClaudeCode, line: str, times: int) -> str:
    """The hook log once ``line`` stands in it ``times`` times (a background process
    writes it a moment after its work is seen); the log as it is if never."""
    deadline = time.monotonic() + CHECKPOINT_WAIT_S
    log = claude.hook_log()
    while log.count(line) < times and time.monotonic() < deadline:
        time.sleep(0.1)
        log = claude.hook_log()
    assert log.count(line) == times, log
    return log


def hook_blocks(text: str, label: str) -> list[str]:
    """The memoryd blocks one hook injected: after Claude Code's label for the hook's context,
    up to the next text that is not a block."""
    assert text.count(label) == 1, f"{label!r} {text.count(label)} times"
    rest = text.split(label, 1)[1].lstrip()
    blocks: list[str] = []
    while rest.startswith("<memoryd-context>"):
        end = rest.index("</memoryd-context>") + len("</memoryd-context>")
        blocks.append(rest[:end])
        rest = rest[end:].lstrip()
    return blocks


def test_a_fact_of_one_print_session_is_recalled_in_the_next(
    claude: ClaudeCode, upstream: AnthropicUpstream, tenant: Tenant
) -> None:
    first, ran, asked = print_session(claude, upstream, FACTS)
    assert ran.out.strip() == NOTED
    assert CONTEXT.findall(texts(asked.body)) == []  # a new tenant: nothing to recall yet
    saved = session_end_checkpoint(tenant, first)
    assert saved["project"] == str(claude.project)

    second, ran, asked = print_session(claude, upstream, QUESTION)
    assert ran.out.strip() == ANSWER
    text = texts(asked.body)
    started = hook_blocks(text, SESSION_START)
    prompted = hook_blocks(text, USER_PROMPT)
    assert started and prompted
    # SessionStart: the first session's checkpoint, as it ended (then the profile, if any)
    assert "[Session restored" in started[0]
    assert f'Last user message: "{FACTS}"' in started[0]
    assert f"Assistant: {NOTED}" in started[0]
    # UserPromptSubmit: what the first session said, found by the question
    assert f"- [just now] user: {FACTS}" in prompted[0]
    # each block once, no memory twice in a block
    blocks = started + prompted
    assert len(CONTEXT.findall(text)) == len(blocks) == len(set(blocks))
    for block in blocks:
        lines = [line for line in block.splitlines() if line.startswith("- ")]
        assert len(lines) == len(set(lines)), block
    assert QUESTION not in "".join(blocks)  # this session's own prompt is not recalled

    session_end_checkpoint(tenant, second)
    # the background process logs its end just after the checkpoint reaches the server
    log = logged(claude, "session-end: done in the background", 2)
    assert " ERROR " not in log and "Traceback" not in log, log
