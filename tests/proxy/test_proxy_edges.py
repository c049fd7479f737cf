"""Bad input, memory off, and upstreams that fail: what the client and the store see."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from proxy_helpers import contents, wait_for
from scripted_llm import Reply
from scripted_upstream import ScriptedUpstream, StreamReply
from server_harness import RunningServer, spawn_server, start_server, stop_process

from memoryd.config import load_settings
from memoryd.embed.local import LocalEmbedder
from memoryd.errors import ValidationError
from memoryd.proxy.forward import Proxy
from memoryd.service import MemoryService


def client(base: str, key: str, timeout: float = 20) -> openai.OpenAI:
    return openai.OpenAI(base_url=base, api_key=key, max_retries=0, timeout=timeout)


def said(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]


# ---------------------------------------------------------------------- keys and bodies
@pytest.mark.parametrize("key", ["mk_wrong", ""])
def test_a_wrong_or_missing_key_is_the_sdks_authentication_error(
    server: RunningServer, upstream: ScriptedUpstream, key: str
) -> None:
    http = httpx.Client(
        base_url=server.url, headers={"Authorization": f"Bearer {key}"} if key else {}
    )
    if key:
        with pytest.raises(openai.AuthenticationError) as caught:
            client(f"{server.url}/v1", key).chat.completions.create(
                model="gpt-4o", messages=said("hi")
            )
        assert caught.value.status_code == 401
        assert caught.value.body["type"] == "authentication_error"  # type: ignore[index]
    response = http.post("/v1/chat/completions", json={"model": "gpt-4o", "messages": []})
    assert response.status_code == 401
    assert set(response.json()["error"]) == {"message", "type", "param", "code"}
    assert upstream.requests == []


def test_x_api_key_works_as_well_as_bearer(
    server: RunningServer, upstream: ScriptedUpstream, make_tenant: Any
) -> None:
    alice = make_tenant("alice")
    upstream.script("fine")
    response = alice.http.post(
        "/v1/chat/completions", json={"model": "gpt-4o", "messages": said("hello there")}
    )
    assert response.status_code == 200, response.text
    assert response.json()["choices"][0]["message"]["content"] == "fine"


@pytest.mark.parametrize(
    ("path", "shape"),
    [("/v1/chat/completions", {"error"}), ("/v1/messages", {"type", "error"})],
)
def test_a_body_that_is_not_json_is_a_400_in_the_format_of_the_api(
    server: RunningServer, upstream: ScriptedUpstream, make_tenant: Any, path: str, shape: set[str]
) -> None:
    alice = make_tenant("alice")
    response = alice.http.post(
        path,
        content=b'{"model": "gpt-4o", "messages": [',
        headers={"Content-Type": "application/json"},
    )
    assert response.status_code == 400
    assert set(response.json()) == shape
    assert "not valid JSON" in json.dumps(response.json())
    with pytest.raises(openai.BadRequestError):
        client(f"{server.url}/v1", alice.key).chat.completions.create(model="", messages=said("hi"))
    assert upstream.requests == []


def test_a_model_with_no_upstream_is_a_clear_404(tmp_path: Path, embedder: LocalEmbedder) -> None:
    running, stop = start_server(tmp_path / "home", embedder)
    try:
        tenant = httpx.post(f"{running.url}/v1/tenants", json={"name": "x"}).json()
        with pytest.raises(openai.NotFoundError) as caught:
            client(f"{running.url}/v1", tenant["api_key"]).chat.completions.create(
                model="llama-3-70b", messages=said("hi")
            )
        assert "'llama-3-70b'" in caught.value.message
        assert "MEMORYD_UPSTREAM_URL" in caught.value.message
    finally:
        stop()


# ---------------------------------------------------------------------- byte for byte
BODY = (
    b'{"model":"gpt-4o",  "messages":[{"role":"user","content":"I prefer tea over coffee"}],'
    b'"temperature":0.2,"tools":[{"type":"function","function":{"name":"f","parameters":{}}}],'
    b'"x_vendor_field":{"keep":[1,2.50,"\\u00e9"]}}'
)


def test_with_memory_disabled_the_upstream_gets_the_clients_bytes(
    server: RunningServer, upstream: ScriptedUpstream, make_tenant: Any
) -> None:
    alice = make_tenant("alice")
    alice.http.post("/v1/memories", json={"content": "The user drinks tea"})
    off = alice.http.put("/api/settings/memory", json={"enabled": False})
    assert off.status_code == 200 and off.json()["enabled"] is False
    upstream.script("ok")
    response = alice.http.post(
        "/v1/chat/completions", content=BODY, headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 200
    [sent] = upstream.chats
    assert sent.raw == BODY
    # nothing is remembered either
    assert "I prefer tea over coffee" not in contents(alice)
    assert contents(alice, memory_type="session") == []


def test_a_key_with_no_memories_sends_the_clients_bytes(
    server: RunningServer, upstream: ScriptedUpstream, make_tenant: Any
) -> None:
    carol = make_tenant("carol")
    upstream.script("ok")
    carol.http.post(
        "/v1/chat/completions", content=BODY, headers={"Content-Type": "application/json"}
    )
    [sent] = upstream.chats
    assert sent.raw == BODY


# ---------------------------------------------------------------------- failing upstreams
def test_an_upstream_500_reaches_the_client_as_it_would_directly_and_turns_are_kept(
    server: RunningServer, upstream: ScriptedUpstream, make_tenant: Any
) -> None:
    alice = make_tenant("alice")
    upstream.script(Reply(status=500, error="the model is overloaded"))
    with pytest.raises(openai.InternalServerError) as direct:
        client(upstream.url, "k").chat.completions.create(model="gpt-4o", messages=said("x"))
    upstream.script(Reply(status=500, error="the model is overloaded"))
    text = "I usually deploy on Fridays. Is that wise?"
    with pytest.raises(openai.InternalServerError) as proxied:
        client(f"{server.url}/v1", alice.key).chat.completions.create(
            model="gpt-4o", messages=said(text)
        )
    assert proxied.value.status_code == direct.value.status_code == 500
    assert proxied.value.body == direct.value.body
    assert proxied.value.response.headers["x-scripted"] == "yes"
    wait_for(lambda: f"user: {text}" in contents(alice, memory_type="session"), "the turn")
    wait_for(lambda: "The user usually deploys on Fridays." in contents(alice), "the habit")


def test_an_upstream_timeout_times_the_client_out_and_turns_are_kept(
    server: RunningServer, upstream: ScriptedUpstream, make_tenant: Any
) -> None:
    alice = make_tenant("alice")
    upstream.script(Reply(content="late", delay_s=3))
    with pytest.raises(openai.APITimeoutError):
        client(upstream.url, "k", timeout=1).chat.completions.create(
            model="gpt-4o", messages=said("x")
        )
    upstream.script(Reply(content="late", delay_s=3))
    text = "I chose Postgres for the ledger. Any caveats?"
    with pytest.raises(openai.APITimeoutError):
        client(f"{server.url}/v1", alice.key, timeout=1).chat.completions.create(
            model="gpt-4o", messages=said(text)
        )
    wait_for(lambda: f"user: {text}" in contents(alice, memory_type="session"), "the turn")


def test_the_proxys_own_upstream_timeout_is_a_504(
    server: RunningServer, upstream: ScriptedUpstream, make_tenant: Any
) -> None:
    alice = make_tenant("alice")
    upstream.script(Reply(content="too late", delay_s=8))  # the server waits 5 s at most
    with pytest.raises(openai.InternalServerError) as caught:
        client(f"{server.url}/v1", alice.key).chat.completions.create(
            model="gpt-4o", messages=said("A question that takes the model too long")
        )
    assert caught.value.status_code == 504
    assert "timed out" in caught.value.message


def test_a_dropped_stream_drops_the_clients_stream_and_turns_are_kept(
    server: RunningServer, upstream: ScriptedUpstream, make_tenant: Any
) -> None:
    alice = make_tenant("alice")

    def read(base: str, key: str, text: str) -> tuple[list[str], str]:
        """The chunks received, and why the stream ended (the SDK may wrap the cause)."""
        got: list[str] = []
        stream = client(base, key).chat.completions.create(
            model="gpt-4o", messages=said(text), stream=True
        )
        with pytest.raises(Exception) as caught:
            for chunk in stream:
                got.append(chunk.choices[0].delta.content or "")
        cause = caught.value.__cause__ or caught.value
        return got, type(cause).__name__

    upstream.script(StreamReply(content="one two three four", drop_after=2))
    direct = read(upstream.url, "k", "x")
    upstream.script(StreamReply(content="one two three four", drop_after=2))
    text = "I always write tests first. Explain mutation testing."
    proxied = read(f"{server.url}/v1", alice.key, text)
    assert proxied == direct == (["one", " two"], "RemoteProtocolError")
    wait_for(lambda: f"user: {text}" in contents(alice, memory_type="session"), "the turn")
    # the broken answer is not remembered as if it were whole
    assert not [c for c in contents(alice, memory_type="session") if c.startswith("assistant")]


def test_a_client_that_leaves_cancels_the_upstream_stream(
    server: RunningServer, upstream: ScriptedUpstream, make_tenant: Any
) -> None:
    alice = make_tenant("alice")
    upstream.script(StreamReply(content=" ".join(["word"] * 200), chunk_delay_s=0.05))
    stream = client(f"{server.url}/v1", alice.key).chat.completions.create(
        model="gpt-4o", messages=said("Tell me a very long story."), stream=True
    )
    next(iter(stream))
    stream.close()
    assert upstream.stats.aborted.wait(5), "the upstream kept streaming to nobody"
    assert upstream.stats.finished == 0


def test_a_retried_request_is_not_remembered_twice(
    server: RunningServer, upstream: ScriptedUpstream, make_tenant: Any
) -> None:
    alice = make_tenant("alice")
    text = "I prefer dark roast coffee. Which beans should I buy?"
    upstream.script(Reply(status=500), "Try an Ethiopian.")
    with pytest.raises(openai.InternalServerError):
        client(f"{server.url}/v1", alice.key).chat.completions.create(
            model="gpt-4o", messages=said(text)
        )
    client(f"{server.url}/v1", alice.key).chat.completions.create(
        model="gpt-4o", messages=said(text)
    )
    wait_for(
        lambda: "assistant: Try an Ethiopian." in contents(alice, memory_type="session"), "turns"
    )
    turns = contents(alice, memory_type="session")
    assert turns.count(f"user: {text}") == 1
    fact = "The user prefers dark roast coffee."
    wait_for(lambda: fact in contents(alice), "the preference")
    assert contents(alice).count(fact) == 1
    # the second request's block does not recall the turn it repeats
    assert "Which beans" not in json.dumps(upstream.chats[1].messages[:-1])


# ---------------------------------------------------------------------- configuration
def test_the_upstream_may_come_from_the_config_file(
    tmp_path: Path, embedder: LocalEmbedder, upstream: ScriptedUpstream
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text(
        f'upstream_url = "{upstream.url}"\nupstream_api_key = "from-the-file"\n'
    )
    running, stop = start_server(home, embedder)
    try:
        tenant = httpx.post(f"{running.url}/v1/tenants", json={"name": "x"}).json()
        upstream.script("configured")
        answer = client(f"{running.url}/v1", tenant["api_key"]).chat.completions.create(
            model="gpt-4o", messages=said("hello")
        )
        assert answer.choices[0].message.content == "configured"
        assert upstream.chats[0].headers["authorization"] == "Bearer from-the-file"
    finally:
        stop()


def test_an_upstream_url_that_is_not_http_is_refused_at_start(
    tmp_path: Path, embedder: LocalEmbedder
) -> None:
    settings = load_settings(tmp_path / "home", upstream_url="api.openai.com/v1")
    with (
        MemoryService(settings=settings, embedder=embedder) as svc,
        pytest.raises(ValidationError, match="must start with http:// or https://"),
    ):
        Proxy(svc)


def test_with_memory_injected_every_other_field_goes_on_untouched(
    server: RunningServer, upstream: ScriptedUpstream, make_tenant: Any
) -> None:
    alice = make_tenant("alice")
    alice.http.post("/v1/memories", json={"content": "The user drinks tea"})
    body = json.loads(BODY)
    body["tool_choice"] = "auto"
    body["response_format"] = {"type": "json_object"}
    upstream.script("ok")
    response = alice.http.post("/v1/chat/completions", json=body)
    assert response.status_code == 200
    [sent] = upstream.chats
    assert sent.raw != BODY  # the block went in
    assert {k: v for k, v in sent.body.items() if k != "messages"} == {
        k: v for k, v in body.items() if k != "messages"
    }
    assert sent.messages[0]["role"] == "system" and "tea" in sent.messages[0]["content"]
    assert sent.messages[1:] == body["messages"]


@pytest.mark.parametrize(
    ("where", "value"),
    [("header", "trip-planning"), ("user", "trip-planning"), ("metadata", "trip-planning")],
)
def test_a_session_named_by_the_client_narrows_recall_and_holds_the_turns(
    server: RunningServer, upstream: ScriptedUpstream, make_tenant: Any, where: str, value: str
) -> None:
    alice = make_tenant("alice")
    for content, session in (("The user packs light", value), ("The user owns a cat", "home")):
        made = alice.http.post("/v1/memories", json={"content": content, "session_id": session})
        assert made.status_code == 201
    upstream.script("ok")
    text = "What should I bring for the weekend away?"
    if where == "metadata":
        path, body = "/v1/messages", {"model": "claude-x", "max_tokens": 10}
        body["metadata"] = {"user_id": value}
    else:
        path, body = "/v1/chat/completions", {"model": "gpt-4o"}
        if where == "user":
            body["user"] = value
    body["messages"] = said(text)
    headers = {"X-Session-Id": value} if where == "header" else {}
    assert alice.http.post(path, json=body, headers=headers).status_code == 200
    [sent] = upstream.chats
    injected = json.dumps(sent.body)
    assert "packs light" in injected and "cat" not in injected
    assert "x-session-id" not in sent.headers  # memoryd's own header stays here

    def turns() -> list[tuple[str, str]]:
        listed = alice.http.get("/v1/memories", params={"memory_type": "session", "limit": 100})
        return sorted((t["content"], t["session_id"]) for t in listed.json()["memories"])

    assert wait_for(lambda: len(turns()) == 2 and turns(), "the turns") == [
        ("assistant: ok", value),
        (f"user: {text}", value),
    ]


def test_a_server_killed_outright_leaves_no_helper_and_kept_what_was_remembered(
    tmp_path: Path, upstream: ScriptedUpstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMORYD_UPSTREAM_URL", upstream.url)
    home = tmp_path / "home"
    process, url = spawn_server(home)
    helpers: list[str] = []
    try:
        key = httpx.post(f"{url}/v1/tenants", json={"name": "k"}).json()["api_key"]
        upstream.script("Tea it is.")
        client(f"{url}/v1", key).chat.completions.create(
            model="gpt-4o", messages=said("I prefer tea over coffee.")
        )
        http = httpx.Client(base_url=url, headers={"X-API-Key": key})
        listed = {"memory_type": "session"}
        wait_for(
            lambda: (
                "user: I prefer tea over coffee."
                in [
                    m["content"] for m in http.get("/v1/memories", params=listed).json()["memories"]
                ]
            ),
            "the turn",
        )
        helpers = subprocess.run(
            ["pgrep", "-P", str(process.pid)], capture_output=True, text=True, check=False
        ).stdout.split()
        assert helpers  # the remembering process (and multiprocessing's resource tracker)
    finally:
        process.kill()  # SIGKILL: no shutdown, no lifespan
        process.wait(timeout=30)
    wait_for(
        lambda: not [pid for pid in helpers if Path(f"/proc/{pid}").exists()],
        "the helper processes to go",
        timeout_s=15,
    )
    again, url = spawn_server(home)
    try:
        http = httpx.Client(base_url=url, headers={"X-API-Key": key})
        turns = http.get("/v1/memories", params={"memory_type": "session"}).json()["memories"]
        assert sorted(t["content"] for t in turns) == [
            "assistant: Tea it is.",
            "user: I prefer tea over coffee.",
        ]
    finally:
        stop_process(again)
