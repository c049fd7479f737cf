"""The OpenClaw plugin in the real OpenClaw gateway, against a real ``memoryd serve``.

A scripted session of several long turns through ``openclaw agent``: memoryd,
the context engine, compacts it and the host sends the assembled context;
``/new`` saves a checkpoint and the next session starts with it, and a fact
of the first session is recalled into the second by the engine's assembly. Then memoryd stops, and
the host goes on with one warning.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from conftest import Memoryd
from openclaw_host import OpenClawGateway
from scripted_llm import Recorded
from scripted_upstream import ScriptedUpstream

BUDGET = 1000  # the plugin's budgetTokens: a few long turns pass 0.75 of it
KEY = "agent:main:release"
AGENT = "openclaw:main"
FACT = "the billing service deploys to cluster fra-7 in Frankfurt"
FILLER = (
    "Keep the changelog short and list the migrations in the order they run, with the "
    "owner of each one and the rollback command beside it, so the on-call person can act "
    "without reading the whole pull request history first. "
)
SESSION_ONE = [
    "Let us plan the release of the billing service for Thursday. " + FILLER,
    f"Note for later: {FACT}. " + FILLER,
    "Draft the announcement for the support team about the new invoice layout. " + FILLER,
    "List the smoke tests we run after the deploy, the payment ones first. " + FILLER,
    "Which dashboards should the on-call engineer keep open during the rollout? " + FILLER,
    "Summarise the plan so far as a short checklist. " + FILLER,
]
QUESTION = "Which cluster does the billing service deploy to?"


def answer(request: Recorded) -> str:
    """The scripted model: a long-ish answer naming the turn it answers."""
    asked = str(request.body["messages"][-1].get("content", ""))[:60]
    return f"Done. I have noted it and will follow up on: {asked}. " + FILLER


@pytest.fixture(scope="module")
def upstream() -> Iterator[ScriptedUpstream]:
    with ScriptedUpstream() as llm:
        llm.responder = answer
        yield llm


@pytest.fixture(scope="module")
def gateway(
    plugins_built: None,
    memoryd: Memoryd,
    upstream: ScriptedUpstream,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[OpenClawGateway]:
    host = OpenClawGateway(
        tmp_path_factory.mktemp("openclaw"),
        upstream.url,
        {"apiUrl": memoryd.url, "budgetTokens": BUDGET, "timeoutMs": 3000},
        MEMORYD_API_KEY=memoryd.key,  # the key from the environment, not the config
    )
    host.start()
    yield host
    host.stop()


def last_request(llm: ScriptedUpstream) -> dict[str, Any]:
    body: dict[str, Any] = llm.chats[-1].body
    return body


def said(request: dict[str, Any], role: str) -> str:
    return "\n".join(json.dumps(m.get("content")) for m in request["messages"] if m["role"] == role)


def conversations(memoryd: Memoryd) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = memoryd.http.get("/v1/context").json()["conversations"]
    return found


def test_a_long_session_compacts_then_new_restores_the_checkpoint_and_recalls_a_fact(
    gateway: OpenClawGateway, memoryd: Memoryd, upstream: ScriptedUpstream
) -> None:
    for text in SESSION_ONE:
        turn = gateway.turn(text, KEY)
        assert turn.code == 0, turn.err
        assert "Done. I have noted it" in turn.out

    # memoryd holds the session as its context engine, compacted
    (conv,) = conversations(memoryd)
    assert conv["summaries"] >= 1 and conv["agent_id"] == AGENT, conv
    first = conv["conversation_id"]
    # what the host sent for the last turn is memoryd's assembly: a summary stands for
    # the first turns, within the budget
    request = last_request(upstream)
    history = said(request, "user") + said(request, "assistant")
    verbatim = [json.dumps(m["content"]) for m in request["messages"] if m["role"] != "system"]
    assert not [m for m in verbatim if "Let us plan" in m and "<memoryd-summary" not in m]
    assert "<memoryd-summary" in history, request
    assert "compressed into summaries" in said(request, "system") + said(request, "developer")
    assembled = memoryd.http.post(
        f"/v1/context/{first}/assemble", json={"budget_tokens": BUDGET}
    ).json()
    assert assembled["estimated_tokens"] <= BUDGET and assembled["summaries"] >= 1

    # /new: the session is saved before the reset, with the agent's own scope
    reset = gateway.turn("/new", KEY)
    assert reset.code == 0, reset.err
    saved = memoryd.http.get("/v1/checkpoints", params={"agent_id": AGENT}).json()["checkpoints"]
    assert [c["trigger"] for c in saved] == ["reset"]
    assert saved[0]["session_id"] == first

    # the next session starts with the checkpoint, and recalls the fact of the first one
    asked = gateway.turn(QUESTION, KEY)
    assert asked.code == 0, asked.err
    request = last_request(upstream)
    prompt = said(request, "user")
    assert "Session restored" in prompt and "billing" in prompt
    assert "fra-7" not in prompt  # not the checkpoint: the engine's recall found it
    system = said(request, "system") + said(request, "developer")
    recalled = system.split("<memoryd-recall>", 1)[1].split("</memoryd-recall>", 1)[0]
    assert "fra-7" in recalled
    second = {c["conversation_id"] for c in conversations(memoryd)} - {first}
    assert len(second) == 1  # /new rotated the session: a conversation of its own


def test_the_key_is_never_logged(gateway: OpenClawGateway, memoryd: Memoryd) -> None:
    logs = gateway.output() + "".join(
        p.read_text(errors="replace") for p in gateway.folder.rglob("*.log")
    )
    assert logs and memoryd.key not in logs


def test_with_memoryd_stopped_the_host_goes_on_with_one_warning(
    gateway: OpenClawGateway, memoryd: Memoryd, upstream: ScriptedUpstream
) -> None:
    """Runs last in this module: it stops the module's memoryd."""
    memoryd.stop()
    before = gateway.output()
    for text in ("Are you still there?", "/new", "Start a fresh checklist for Friday."):
        turn = gateway.turn(text, KEY)
        assert turn.code == 0, turn.err
    assert "Done. I have noted it" in turn.out  # the model answered: the session went on
    after = gateway.output()[len(before) :]
    warnings = [
        line for line in after.splitlines() if "memoryd at" in line and "unreachable" in line
    ]
    assert len(warnings) == 1, after
    assert "Traceback" not in after and "Unhandled" not in after
    # the gateway stops in time: gateway_stop's flush gives up on memoryd, it does not hang
    seen = gateway.output()
    stopped = gateway.stop()[len(seen) :]
    assert gateway.process is not None and gateway.process.returncode is not None
    assert "timed out" not in stopped, stopped
