"""The official ``openai`` SDK through the memory proxy to the scripted upstream."""

from __future__ import annotations

import asyncio
from typing import Any

import openai
import pytest
from proxy_helpers import UPSTREAM_KEY, contents, wait_for
from scripted_upstream import ScriptedUpstream, StreamReply
from server_harness import RunningServer, TenantClient

from memoryd.inject import FENCE_CLOSE, FENCE_OPEN

ANSWER = "Noted, Python it is for the new service."


def client(server: RunningServer, key: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{server.url}/v1", api_key=key, max_retries=0, timeout=20)


def aclient(server: RunningServer, key: str) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=f"{server.url}/v1", api_key=key, max_retries=0, timeout=20)


def remember(t: TenantClient, content: str) -> None:
    response = t.http.post("/v1/memories", json={"content": content})
    assert response.status_code == 201, response.text


def chat(first: str) -> list[dict[str, Any]]:
    return [
        {"role": "system", "content": "Answer in one sentence."},
        {"role": "user", "content": first},
    ]


def ask(server: RunningServer, key: str, messages: Any, stream: bool, sync: bool) -> str:
    """One completion through the SDK; the answer's text as the client received it."""
    if sync:
        c = client(server, key)
        if not stream:
            return (
                c.chat.completions.create(model="gpt-4o", messages=messages)
                .choices[0]
                .message.content
                or ""
            )
        parts = c.chat.completions.create(model="gpt-4o", messages=messages, stream=True)
        return "".join(ch.choices[0].delta.content or "" for ch in parts if ch.choices)

    async def run() -> str:
        c = aclient(server, key)
        if not stream:
            done = await c.chat.completions.create(model="gpt-4o", messages=messages)
            return done.choices[0].message.content or ""
        parts = await c.chat.completions.create(model="gpt-4o", messages=messages, stream=True)
        return "".join([ch.choices[0].delta.content or "" async for ch in parts if ch.choices])

    return asyncio.run(run())


@pytest.mark.parametrize("sync", [True, False], ids=["sync", "async"])
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_memory_is_injected_answer_relayed_and_preference_remembered(
    server: RunningServer,
    upstream: ScriptedUpstream,
    make_tenant: Any,
    sync: bool,
    stream: bool,
) -> None:
    alice, bob = make_tenant("alice"), make_tenant("bob")
    remember(alice, "The user lives in Lisbon and works on payment services")
    upstream.script(StreamReply(content=ANSWER) if stream else ANSWER)
    said = "I prefer Python over Go. Which language should the payment service use?"

    answer = ask(server, alice.key, chat(said), stream, sync)

    assert answer == ANSWER  # the upstream's answer, unchanged
    [sent] = upstream.chats
    assert sent.headers["authorization"] == f"Bearer {UPSTREAM_KEY}"  # never the memoryd key
    assert alice.key not in str(sent.headers)
    block, own, user = sent.messages
    assert block["role"] == "system"
    assert block["content"].startswith(FENCE_OPEN) and block["content"].endswith(FENCE_CLOSE)
    assert "Lisbon" in block["content"]
    assert own == {"role": "system", "content": "Answer in one sentence."}  # the client's, after
    assert user == {"role": "user", "content": said}
    assert sent.body.get("stream", False) is stream

    wait_for(lambda: "The user prefers Python over Go." in contents(alice), "the preference")
    turns = wait_for(
        lambda: (c := contents(alice, memory_type="session")) and f"assistant: {ANSWER}" in c and c,
        "the raw turns",
    )
    assert f"user: {said}" in turns
    assert not [c for c in contents(bob) + contents(bob, memory_type="session") if "Python" in c]


@pytest.mark.parametrize("sync", [True, False], ids=["sync", "async"])
def test_streamed_chunks_arrive_before_the_upstream_finishes(
    server: RunningServer, upstream: ScriptedUpstream, make_tenant: Any, sync: bool
) -> None:
    alice = make_tenant("alice")
    upstream.script(StreamReply(content="one two three four", hold_after_first=True))
    messages = chat("Count to four, please, slowly and clearly.")
    if sync:
        stream = client(server, alice.key).chat.completions.create(
            model="gpt-4o", messages=messages, stream=True
        )
        first = next(iter(stream))
        assert upstream.stats.finished == 0  # the upstream is still holding the rest back
        upstream.gate.set()
        rest = [ch.choices[0].delta.content or "" for ch in stream if ch.choices]
    else:

        async def run() -> tuple[Any, list[str]]:
            s = await aclient(server, alice.key).chat.completions.create(
                model="gpt-4o", messages=messages, stream=True
            )
            it = s.__aiter__()
            head = await it.__anext__()
            assert upstream.stats.finished == 0
            upstream.gate.set()
            return head, [ch.choices[0].delta.content or "" async for ch in it if ch.choices]

        first, rest = asyncio.run(run())
    assert first.choices[0].delta.content == "one"
    assert "".join(rest) == " two three four"
    assert upstream.stats.finished_after(1) == 1


@pytest.mark.parametrize("model", ["o1", "o1-mini", "glm-4.6", "glm/glm-4-plus", "zai"])
def test_providers_without_system_role_get_the_block_in_the_first_user_message(
    server: RunningServer, upstream: ScriptedUpstream, make_tenant: Any, model: str
) -> None:
    alice = make_tenant("alice")
    remember(alice, "The user is allergic to peanuts")
    upstream.script("ok")
    said = "What snack should I pack for the hike tomorrow?"
    client(server, alice.key).chat.completions.create(
        model=model, messages=[{"role": "user", "content": said}]
    )
    [sent] = upstream.chats
    assert [m["role"] for m in sent.messages] == ["user"]
    content = sent.messages[0]["content"]
    assert content.startswith(FENCE_OPEN) and "peanuts" in content
    assert content.endswith("\n\n" + said)


def test_a_tenant_mapping_sends_a_model_elsewhere_and_the_list_is_configurable(
    server: RunningServer, upstream: ScriptedUpstream, make_tenant: Any
) -> None:
    alice = make_tenant("alice")
    remember(alice, "The user writes release notes on Fridays")
    settings = {
        "noSystemRoleProviders": ["my-model"],
        "upstreams": {"my-*": {"url": upstream.url, "apiKey": "other-key"}},
    }
    put = alice.http.put("/api/settings/memory", json=settings)
    assert put.status_code == 200, put.text
    assert put.json()["upstreams"]["my-*"]["apiKey"] == "********"  # never shown again
    upstream.script("ok", "ok")
    said = [{"role": "user", "content": "When do I write the release notes?"}]
    client(server, alice.key).chat.completions.create(model="my-model-2", messages=said)
    client(server, alice.key).chat.completions.create(model="o1", messages=said)
    mapped, default = upstream.chats
    assert mapped.headers["authorization"] == "Bearer other-key"
    assert mapped.messages[0]["role"] == "user" and "release notes" in mapped.messages[0]["content"]
    assert default.headers["authorization"] == f"Bearer {UPSTREAM_KEY}"
    assert default.messages[0]["role"] == "system"  # o1 is no longer on this tenant's list


def test_models_are_listed_by_the_upstream(
    server: RunningServer, upstream: ScriptedUpstream, make_tenant: Any
) -> None:
    alice = make_tenant("alice")
    models = client(server, alice.key).models.list()
    assert [m.id for m in models] == ["scripted-1"]
    [sent] = upstream.requests
    assert sent.headers["authorization"] == f"Bearer {UPSTREAM_KEY}"
