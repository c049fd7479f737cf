"""OpenClaw installed as docs/openclaw.md says, on a fresh HOME, for two sessions.

The install command and the config snippet are read from the docs and run as
pasted (the snippet's ``apiUrl`` pointed at the test's server, the key from
``MEMORYD_API_KEY``). Session 1 states facts; ``/new`` starts session 2, whose
first prompt is memoryd's assembly: the engine recalls the facts into the
agent's own request. Each session is a conversation and a checkpoint of its
own, the hooks save into the one the engine is on, the host's heartbeat is no
turn of anyone's, and the gateway logs no error over the run.
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
from openclaw_host import OpenClawGateway
from scripted_llm import Recorded
from scripted_upstream import ScriptedUpstream

DOCS = Path(__file__).resolve().parents[2] / "docs" / "openclaw.md"
CHECKOUT = DOCS.parents[1]
KEY = "agent:main:main"
AGENT = "openclaw:main"
SESSION_ONE = [
    "I just moved to Porto for a new job at Critical Software.",
    "Set up a checklist for unpacking the kitchen.",
]
QUESTION = "Which city do I live in now?"
SETTLE_S = 30  # the host runs agent_end after it answers: its save lands a moment later


def documented() -> tuple[list[str], dict[str, Any]]:
    """The install command and the config snippet of the docs' Install section."""
    section = DOCS.read_text(encoding="utf-8").split("## Install", 1)[1].split("\n## ", 1)[0]
    shell = re.search(r"```sh\n(.*?)```", section, re.S)
    snippet = re.search(r"```json\n(.*?)```", section, re.S)
    assert shell and snippet, section
    install = [line for line in shell.group(1).splitlines() if "plugins install" in line]
    assert len(install) == 1, shell.group(1)
    return install[0].split()[1:], json.loads(snippet.group(1))


def merged(into: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    out = dict(into)
    for key, value in extra.items():
        old = out.get(key)
        out[key] = (
            merged(old, value) if isinstance(old, dict) and isinstance(value, dict) else value
        )
    return out


def is_heartbeat(body: dict[str, Any]) -> bool:
    """A heartbeat run: the host's poll is a user-role message of its own (the system
    prompt of every run names the heartbeat too)."""
    asked = [json.dumps(m.get("content")) for m in body["messages"] if m["role"] == "user"]
    return any("heartbeat" in text.lower() for text in asked)


def answer(request: Recorded) -> str:
    return "HEARTBEAT_OK" if is_heartbeat(request.body) else "Done."


@pytest.fixture(scope="module")
def upstream() -> Iterator[ScriptedUpstream]:
    with ScriptedUpstream() as llm:
        llm.responder = answer
        yield llm


@pytest.fixture(scope="module")
def gateway(
    hosts_built: None,
    tenant: Tenant,
    upstream: ScriptedUpstream,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[OpenClawGateway]:
    host = OpenClawGateway(
        tmp_path_factory.mktemp("openclaw-home"), upstream.url, None, MEMORYD_API_KEY=tenant.key
    )
    command, snippet = documented()
    installed = host.cli(*command, cwd=CHECKOUT)
    assert installed.code == 0, installed.out + installed.err
    config_file = host.folder / "openclaw.json"
    config = merged(json.loads(config_file.read_text()), snippet)
    config["plugins"]["entries"]["memoryd"]["config"]["apiUrl"] = tenant.url
    config_file.write_text(json.dumps(config))
    host.start()
    yield host
    host.stop()


def agent_requests(llm: ScriptedUpstream, since: int) -> list[dict[str, Any]]:
    """The agent's own requests (with its tools), not the host's side calls."""
    return [c.body for c in llm.chats[since:] if c.body.get("tools")]


def text_of(request: dict[str, Any], *roles: str) -> str:
    parts = []
    for m in request["messages"]:
        if m["role"] in roles:
            content = m.get("content")
            parts.append(content if isinstance(content, str) else json.dumps(content))
    return "\n".join(parts)


def checkpoints(tenant: Tenant) -> dict[str, str]:
    """Each session's checkpoint: what saved it last."""
    found = tenant.http.get("/v1/checkpoints", params={"agent_id": AGENT}).json()
    return {c["session_id"]: c["trigger"] for c in found["checkpoints"]}


def rendered(tenant: Tenant, session: str) -> str:
    found = tenant.http.get("/v1/checkpoints", params={"session_id": session}).json()
    (checkpoint,) = found["checkpoints"]
    text: str = tenant.http.get(f"/v1/checkpoints/{checkpoint['id']}").json()["rendered"]
    return text


def settled(tenant: Tenant, session: str) -> dict[str, str]:
    deadline = time.monotonic() + SETTLE_S
    while session not in (saved := checkpoints(tenant)):
        assert time.monotonic() < deadline, saved
        time.sleep(0.2)
    return saved


def test_two_sessions_recall_in_the_agents_own_request_and_a_checkpoint_each(
    gateway: OpenClawGateway, tenant: Tenant, upstream: ScriptedUpstream
) -> None:
    for text in SESSION_ONE:
        turn = gateway.turn(text, KEY)
        assert turn.code == 0, turn.err
    (first,) = [
        c["conversation_id"] for c in tenant.http.get("/v1/context").json()["conversations"]
    ]
    settled(tenant, first)

    reset = gateway.turn("/new", KEY)
    assert reset.code == 0, reset.err
    assert checkpoints(tenant)[first] == "reset"

    before = len(upstream.chats)
    asked = gateway.turn(QUESTION, KEY)
    assert asked.code == 0, asked.err
    (request,) = agent_requests(upstream, before)
    system = text_of(request, "system", "developer")
    recalled = system.split("<memoryd-recall>", 1)[1].split("</memoryd-recall>", 1)[0]
    assert "Porto" in recalled  # the first prompt of the session is memoryd's assembly
    assert recalled.count("Critical Software") == 1  # said once, recalled once
    assert "<memoryd-context>" in text_of(request, "user")  # the checkpoint, restored

    # session 2 is a conversation and a checkpoint of its own, and the hooks save into it
    conversations = {
        c["conversation_id"] for c in tenant.http.get("/v1/context").json()["conversations"]
    }
    assert conversations == {first, f"{first}.1"}
    saved = settled(tenant, f"{first}.1")
    assert saved[first] == "reset" and saved[f"{first}.1"] == "agent_end"
    assert QUESTION in rendered(tenant, f"{first}.1")
    assert QUESTION not in rendered(tenant, first)


def test_the_heartbeat_is_no_ones_turn(
    gateway: OpenClawGateway, tenant: Tenant, upstream: ScriptedUpstream
) -> None:
    def stored() -> tuple[dict[str, int], dict[str, str]]:
        found = tenant.http.get("/v1/context").json()["conversations"]
        return {c["conversation_id"]: c["messages"] for c in found}, checkpoints(tenant)

    before, asked = stored(), len(upstream.chats)
    woke = gateway.cli("system", "event", "--text", "Check for urgent follow-ups", "--mode", "now")
    assert woke.code == 0, woke.err
    deadline = time.monotonic() + SETTLE_S
    while not any(is_heartbeat(c.body) for c in upstream.chats[asked:]):
        assert time.monotonic() < deadline, "the heartbeat never ran"
        time.sleep(0.2)
    time.sleep(2)  # what the host does after the run (agent_end, afterTurn) has landed
    assert stored() == before
    found = tenant.http.get("/v1/memories/search", params={"q": "heartbeat poll"}).json()
    assert not [h for h in found["results"] if "heartbeat" in h["memory"]["content"].lower()]


def test_the_gateway_logs_no_error(gateway: OpenClawGateway) -> None:
    entries = [
        json.loads(line)
        for line in gateway.log.read_text(encoding="utf-8").splitlines()
        if line.startswith("{")
    ]
    errors = [e for e in entries if e.get("_meta", {}).get("logLevelName") in ("ERROR", "FATAL")]
    assert entries and not errors, errors
    assert "conflict" not in gateway.output()
