"""The official ``anthropic`` SDK through the memory proxy to the scripted upstream."""

from __future__ import annotations

import asyncio
from typing import Any

import anthropic
import pytest
from proxy_helpers import UPSTREAM_KEY, contents, wait_for
from scripted_upstream import ScriptedUpstream, StreamReply
from server_harness import RunningServer

from memoryd.inject import FENCE_CLOSE, FENCE_OPEN

ANSWER = "Then Python suits you: the service can start this week."
MODEL = "claude-scripted-1"


def client(server: RunningServer, key: str) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=server.url, api_key=key, max_retries=0, timeout=20)


def aclient(server: RunningServer, key: str) -> anthropic.AsyncAnthropic:
    return anthropic.AsyncAnthropic(base_url=server.url, api_key=key, max_retries=0, timeout=20)


@pytest.mark.parametrize("system", [None, "Be brief.", [{"type": "text", "text": "Be brief."}]])
@pytest.mark.parametrize("mode", ["sync", "sync-stream", "async", "async-stream"])
def test_memory_goes_into_system_and_the_answer_comes_back_unchanged(
    server: RunningServer, upstream: ScriptedUpstream, make_tenant: Any, mode: str, system: Any
) -> None:
    alice, bob = make_tenant("alice"), make_tenant("bob")
    stored = alice.http.post("/v1/memories", json={"content": "The user runs a bakery in Porto"})
    assert stored.status_code == 201
    upstream.script(StreamReply(content=ANSWER) if "stream" in mode else ANSWER)
    said = "I prefer Python over Go. What should the bakery's order app be written in?"
    kwargs: dict[str, Any] = {
        "model": MODEL,
        "max_tokens": 200,
        "messages": [{"role": "user", "content": said}],
    }
    if system is not None:
        kwargs["system"] = system

    if mode == "sync":
        message = client(server, alice.key).messages.create(**kwargs)
        answer = message.content[0].text  # type: ignore[union-attr]
    elif mode == "sync-stream":
        with client(server, alice.key).messages.stream(**kwargs) as stream:
            answer = "".join(stream.text_stream)
    elif mode == "async":

        async def whole() -> str:
            message = await aclient(server, alice.key).messages.create(**kwargs)
            return message.content[0].text  # type: ignore[union-attr]

        answer = asyncio.run(whole())
    else:

        async def streamed() -> str:
            async with aclient(server, alice.key).messages.stream(**kwargs) as stream:
                return "".join([t async for t in stream.text_stream])

        answer = asyncio.run(streamed())

    assert answer == ANSWER
    [sent] = upstream.chats
    assert sent.path == "/v1/messages"
    assert sent.headers["x-api-key"] == UPSTREAM_KEY
    assert sent.headers["anthropic-version"]  # the SDK's own headers go on
    assert sent.messages == [{"role": "user", "content": said}]
    got = sent.body["system"]
    if isinstance(system, list):
        assert got[1:] == system  # the client's own blocks come after the recalled one
        got = got[0]["text"]
    elif system:
        assert got.endswith("\n\nBe brief.")
        got = got.removesuffix("\n\nBe brief.")
    assert got.startswith(FENCE_OPEN) and got.endswith(FENCE_CLOSE)
    assert "bakery in Porto" in got

    wait_for(lambda: "The user prefers Python over Go." in contents(alice), "the preference")
    wait_for(lambda: f"assistant: {ANSWER}" in contents(alice, memory_type="session"), "turns")
    assert not [c for c in contents(bob) if "Python" in c]


def test_streamed_events_arrive_before_the_upstream_finishes(
    server: RunningServer, upstream: ScriptedUpstream, make_tenant: Any
) -> None:
    alice = make_tenant("alice")
    upstream.script(StreamReply(content="alpha beta gamma", hold_after_first=True))
    with client(server, alice.key).messages.stream(
        model=MODEL, max_tokens=50, messages=[{"role": "user", "content": "Say three words."}]
    ) as stream:
        events = iter(stream)
        first = next(events)
        assert first.type == "message_start"
        assert upstream.stats.finished == 0
        upstream.gate.set()
        text = "".join(stream.text_stream)
    assert text == "alpha beta gamma"
    assert upstream.stats.finished_after(1) == 1


def test_wrong_and_missing_keys_raise_the_sdk_authentication_error(
    server: RunningServer, upstream: ScriptedUpstream
) -> None:
    with pytest.raises(anthropic.AuthenticationError) as caught:
        client(server, "mk_not-a-key").messages.create(
            model=MODEL, max_tokens=10, messages=[{"role": "user", "content": "hi"}]
        )
    assert caught.value.status_code == 401
    assert caught.value.body["type"] == "error"  # type: ignore[index]
    assert caught.value.body["error"]["type"] == "authentication_error"  # type: ignore[index]
    assert upstream.requests == []
