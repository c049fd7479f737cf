"""OpenCode itself: the pinned ``opencode`` CLI with the memoryd plugin, a scripted model, and the
host suite's memoryd.

Each turn is ``opencode run MESSAGE`` (no ``--title``, so OpenCode makes its
title call too; ``--continue`` for a session's next message), and every
request OpenCode sends the model is logged by the scripted server. What is
asserted is what the model was sent: a fact of one session reaches the
agent's own requests in the next (the ones with tools, before and after a
tool call), once in each, current, never in the title call; the quote marks
``opencode run`` wraps a message in are not in what memoryd keeps; and
nothing left the machine. ``opencode_host`` says how OpenCode runs offline.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hosts_harness import Tenant
from opencode_host import NetworkTrap, OpenCode, OpenCodeUpstream, ToolCall
from scripted_llm import Recorded, Reply

FENCE = "<memoryd-context>"
FENCE_END = "</memoryd-context>"
OLD = "I use npm for every JavaScript project."
CHANGE = "Actually I switched from npm to pnpm last week."
REMEMBER = "Remember that the staging database is called orca-staging."
QUESTION = "Which package manager should the new service use?"
FOLLOW_UP = "And which one for the docs site?"
TITLE = "Package manager choice"
DISTIL_TIMEOUT_S = 60


class Model:
    """The scripted model's answers: a title for the title call (no tools), else the next
    scripted answer for the agent, else a short one."""

    def __init__(self) -> None:
        self.agent: list[Reply] = []

    def __call__(self, request: Recorded) -> Reply | str:
        if not request.body.get("tools"):
            return TITLE
        return self.agent.pop(0) if self.agent else "Noted."


@pytest.fixture(scope="module")
def model() -> Model:
    return Model()


@pytest.fixture(scope="module")
def upstream(model: Model) -> Iterator[OpenCodeUpstream]:
    with OpenCodeUpstream() as llm:
        llm.responder = model
        yield llm


@pytest.fixture(scope="module")
def trap() -> Iterator[NetworkTrap]:
    listening = NetworkTrap()
    yield listening
    listening.close()


@pytest.fixture(scope="module")
def opencode(
    hosts_built: None,
    tenant: Tenant,
    upstream: OpenCodeUpstream,
    trap: NetworkTrap,
    tmp_path_factory: pytest.TempPathFactory,
) -> OpenCode:
    folder: Path = tmp_path_factory.mktemp("opencode")
    return OpenCode(folder, upstream.url, {"apiUrl": tenant.url, "apiKey": tenant.key}, trap.url)


def turn(opencode: OpenCode, upstream: OpenCodeUpstream, message: str, *args: str) -> list[Any]:
    """``opencode run`` one message; the requests the model got for it."""
    start = len(upstream.chats)
    ran = opencode.run(message, *args)
    assert ran.code == 0, f"{ran.err}\n{opencode.log()}"
    return [r.body for r in upstream.chats[start:]]


def text(content: Any) -> str:
    """A message's content as text: a string, or its text parts."""
    if isinstance(content, str):
        return content
    return "\n".join(p.get("text", "") for p in content or [] if isinstance(p, dict))


def said(request: dict[str, Any]) -> str:
    return "\n".join(text(m.get("content")) for m in request["messages"])


def split(requests: list[Any]) -> tuple[list[Any], list[Any]]:
    """(the title calls, the agent's requests): the agent's carry its tools, the title's none."""
    return [r for r in requests if not r.get("tools")], [r for r in requests if r.get("tools")]


def block(request: dict[str, Any]) -> str:
    """The recall block the request carries in the user's last message (asserting there is one)."""
    last = [m for m in request["messages"] if m["role"] == "user"][-1]
    content = text(last["content"])
    assert content.count(FENCE) == 1, content
    return content[content.index(FENCE) : content.index(FENCE_END) + len(FENCE_END)]


def memories(tenant: Tenant, **params: Any) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = tenant.http.get(
        "/v1/memories", params={"limit": 100, **params}
    ).json()["memories"]
    return found


def distilled(tenant: Tenant, words: str) -> dict[str, Any]:
    """The fact memoryd distilled with ``words`` in it, once it has (distilling is queued)."""
    deadline = time.monotonic() + DISTIL_TIMEOUT_S
    while True:
        facts = [
            m
            for m in memories(tenant)
            if m["memory_type"] != "session"
            and words in m["content"]
            and not m.get("superseded_by")
        ]
        if facts:
            return facts[0]
        assert time.monotonic() < deadline, memories(tenant)
        time.sleep(0.2)


def test_a_fact_of_one_session_reaches_each_request_of_the_agent_in_the_next(
    opencode: OpenCode, upstream: OpenCodeUpstream, model: Model, tenant: Tenant, trap: NetworkTrap
) -> None:
    # session 1: a fact, then its change, then something to remember, each its own run
    first = turn(opencode, upstream, f"{OLD} Set up the repo.")
    titles, agent = split(first)
    assert len(titles) == 1 and len(agent) == 1
    assert FENCE not in said(agent[0])  # nothing known yet
    turn(opencode, upstream, CHANGE, "--continue")
    turn(opencode, upstream, REMEMBER, "--continue")
    current = distilled(tenant, "pnpm")

    # what memoryd kept has none of the quote marks `opencode run` wrapped each message in
    turns = memories(tenant, memory_type="session")
    assert f"user: {OLD} Set up the repo." in [m["content"] for m in turns], turns
    assert not [m for m in turns + memories(tenant) if '"' in m["content"]]
    pinned = memories(tenant, tags="remembered")
    assert [m["content"] for m in pinned] == [REMEMBER]

    # session 2: the agent calls a tool, so its loop sends the model two requests
    model.agent.append(ToolCall(tool="memory_search", arguments={"query": "package manager"}))
    second = turn(opencode, upstream, QUESTION)
    titles, agent = split(second)
    assert len(titles) == 1 and len(agent) == 2, second
    # OpenCode's title call comes first; it gets nothing
    assert FENCE not in said(titles[0])
    recalled = block(agent[0])
    for request in agent:
        assert said(request).count(FENCE) == 1  # once in each request, nowhere else
        assert block(request) == recalled  # recalled once for the message
    assert current["content"] in recalled  # the fact as it is now
    assert "pnpm" in recalled and OLD not in recalled  # not as it was
    # each thing said once: a turn and the memory pinned from it say the same, one shows
    items = [
        re.sub(r"^- (\[[^]]*\] )?(user: )?", "", line).casefold()
        for line in recalled.splitlines()
        if line.startswith("- ")
    ]
    assert len(items) == len(set(items)), recalled
    assert "memoryd-context" not in json.dumps(agent[1]["messages"][-1])  # the tool's answer
    assert "pnpm" in json.dumps(agent[1]["messages"][-1])

    # the next message of session 2: its own recall; the first one's block is gone from history
    third = turn(opencode, upstream, FOLLOW_UP, "--continue")
    titles, agent = split(third)
    assert titles == [] and len(agent) == 1  # the session has its title
    assert said(agent[0]).count(FENCE) == 1
    assert QUESTION in said(agent[0]) and FOLLOW_UP in text(agent[0]["messages"][-1]["content"])
    block(agent[0])

    assert trap.connections == 0  # nothing but loopback was reached
