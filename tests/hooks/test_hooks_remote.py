"""The hooks against a running memoryd server: what they inject, what the server stores."""

from __future__ import annotations

import io
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cc_transcript import SESSION, conversation, payload
from hook_helpers import clean_env, run_hook_process
from server_harness import RunningServer, TenantClient, create_tenant, module_server

from memoryd.hooks import capture, session_start, user_prompt
from memoryd.hooks.backend import RemoteBackend
from memoryd.hooks.config import HookConfig
from memoryd.hooks.runner import run_hook

TASK_TIMEOUT_S = 30


server = module_server("hook-server")


@pytest.fixture
def tenant(server: RunningServer) -> Iterator[TenantClient]:
    tenant_id, key = create_tenant(server, "hooks")
    http = server.client(key)
    http.post(
        "/v1/memories",
        json={"content": "Prefers pnpm over npm for JavaScript projects", "tags": ["seed"]},
    ).raise_for_status()
    http.post(
        "/v1/memories",
        json={"content": "Deploys the billing service to eu-west-1", "category": "entities"},
    ).raise_for_status()
    yield TenantClient(tenant_id, key, http)
    http.close()


@pytest.fixture
def remote(server: RunningServer, tenant: TenantClient) -> Iterator[RemoteBackend]:
    backend = RemoteBackend(server.url, tenant.key, timeout_s=5)
    yield backend
    backend.close()


def context(output: dict[str, Any] | None) -> str:
    assert output is not None
    text: str = output["hookSpecificOutput"]["additionalContext"]
    return text


def test_session_start_and_prompt_recall_from_the_server(remote: RemoteBackend, home: Path) -> None:
    config = HookConfig(url="set", home=home)
    start = context(
        session_start.run(payload("SessionStart", source="startup"), remote, config).output
    )
    assert "Prefers pnpm over npm" in start and "eu-west-1" in start
    prompt = payload("UserPromptSubmit", prompt="which package manager do I use?")
    assert "Prefers pnpm" in context(user_prompt.run(prompt, remote, config).output)


def test_remember_request_is_stored_on_the_server(
    remote: RemoteBackend, tenant: TenantClient, home: Path
) -> None:
    config = HookConfig(url="set", home=home)
    said = payload("UserPromptSubmit", prompt="Please remember that Ana owns the billing service.")
    for _ in range(2):
        user_prompt.run(said, remote, config)
    rows = tenant.http.get("/v1/memories", params={"tags": "remembered"}).json()["memories"]
    assert [(m["content"], m["source"]) for m in rows] == [
        ("Please remember that Ana owns the billing service.", "claude-code")
    ]


def test_stop_sends_the_transcript_to_the_server(
    remote: RemoteBackend, tenant: TenantClient, home: Path, tmp_path: Path
) -> None:
    path = conversation(tmp_path / "t.jsonl").write()
    config = HookConfig(url="set", home=home)
    result = capture.stop(payload("Stop", path), remote, config)
    assert result.output is None and result.pending_task is None
    turns = tenant.http.get("/v1/memories", params={"memory_type": "session"}).json()["memories"]
    assert len(turns) == 6
    assert {m["session_id"] for m in turns} == {SESSION}
    assert all(set(m["tags"]) == {"auto-captured", "claude-code"} for m in turns)


def test_the_ourmem_variables_and_a_real_process(
    server: RunningServer, tenant: TenantClient, tmp_path: Path
) -> None:
    env = clean_env(
        OMEM_API_URL=server.url + "/", OMEM_API_KEY=tenant.key, MEMORYD_HOME=str(tmp_path / "h")
    )
    ran = run_hook_process("session-start", payload("SessionStart", source="compact"), env)
    assert ran.code == 0, ran.err
    assert "Prefers pnpm over npm" in ran.json()["hookSpecificOutput"]["additionalContext"]
    transcript = conversation(tmp_path / "t.jsonl").write()
    ran = run_hook_process("pre-compact", payload("PreCompact", transcript, trigger="manual"), env)
    assert (ran.code, ran.out) == (0, "")
    deadline = time.monotonic() + TASK_TIMEOUT_S
    while True:
        turns = tenant.http.get("/v1/memories", params={"memory_type": "session"}).json()
        if turns["memories"] or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert all(set(m["tags"]) == {"pre-compact", "claude-code"} for m in turns["memories"])
    assert len(turns["memories"]) == 6


def test_a_rejected_key_answers_nothing_and_is_logged(server: RunningServer, home: Path) -> None:
    out = io.BytesIO()
    environ = {"MEMORYD_URL": server.url, "MEMORYD_API_KEY": "mk_wrong", "MEMORYD_HOME": str(home)}
    body = io.BytesIO(b'{"hook_event_name": "UserPromptSubmit", "prompt": "what do I prefer?"}')
    code = run_hook("user-prompt", stdin=body, stdout=out, environ=environ, exit_process=False)
    assert (code, out.getvalue()) == (0, b"")
    log = (home / "logs" / "hooks.log").read_text(encoding="utf-8")
    assert "search failed: unauthorized" in log
