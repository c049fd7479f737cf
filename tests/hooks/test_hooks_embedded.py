"""Each hook, in process, on a real embedded home: what it answers and what it stores."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from cc_transcript import SESSION, Transcript, conversation, payload

from memoryd.hooks import capture, session_start, user_prompt
from memoryd.hooks.backend import EmbeddedBackend
from memoryd.hooks.config import HookConfig
from memoryd.hooks.user_prompt import BARE_NOTE, SAVED_NOTE
from memoryd.inject import FENCE_CLOSE, FENCE_OPEN, estimate_tokens
from memoryd.models import MemoryType
from memoryd.sdk import Memory
from memoryd.text.remember import memory_key


def context_of(output: dict[str, Any] | None, event: str) -> str:
    """The additionalContext of a hook answer, after checking it is Claude Code's shape."""
    assert output is not None
    text = json.dumps(output)  # what the runner prints must be JSON
    assert json.loads(text) == output
    assert set(output) == {"hookSpecificOutput"}
    specific = output["hookSpecificOutput"]
    assert specific["hookEventName"] == event
    assert set(specific) == {"hookEventName", "additionalContext"}
    context: str = specific["additionalContext"]
    return context


def seed(memory: Memory) -> None:
    memory.add("The user is a backend engineer at Acme", category="profile", importance=0.9)
    memory.add("Prefers pnpm over npm for JavaScript projects", category="preferences")
    memory.add("Migrated the billing service to Postgres 16", category="events")
    memory.add("Ana owns the billing service", category="entities")


# ---------------------------------------------------------------------- SessionStart
def test_session_start_injects_profile_and_recent_memories(
    memory: Memory, backend: EmbeddedBackend, config: HookConfig
) -> None:
    seed(memory)
    for source in ("startup", "compact"):
        result = session_start.run(payload("SessionStart", source=source), backend, config)
        context = context_of(result.output, "SessionStart")
        assert context.startswith(FENCE_OPEN) and context.endswith(FENCE_CLOSE)
        assert "## About the user\n- The user is a backend engineer at Acme" in context
        assert "Prefers pnpm over npm" in context
        assert "Migrated the billing service to Postgres 16" in context
        assert "] Ana owns the billing service" in context  # recent, with its age
        assert result.pending_task is None


def test_session_start_respects_the_budget(
    memory: Memory, backend: EmbeddedBackend, config: HookConfig
) -> None:
    for i in range(40):
        memory.add(f"Project note {i}: the staging cluster {i} runs Kubernetes 1.{i}")
        memory.add(f"第{i}个项目使用中文文档和简短的提交说明", category="preferences")
    tight = replace(config, session_tokens=200)
    context = context_of(
        session_start.run(payload("SessionStart"), backend, tight).output, "SessionStart"
    )
    assert estimate_tokens(context) <= 200
    assert context.count("\n- ") >= 2


def test_session_start_on_an_empty_home_prints_nothing(
    backend: EmbeddedBackend, config: HookConfig
) -> None:
    assert session_start.run(payload("SessionStart"), backend, config).output is None


# ---------------------------------------------------------------------- UserPromptSubmit
def test_user_prompt_injects_what_is_relevant(
    memory: Memory, backend: EmbeddedBackend, config: HookConfig
) -> None:
    seed(memory)
    prompt = payload(
        "UserPromptSubmit", prompt="Which package manager should I use to install deps?"
    )
    context = context_of(user_prompt.run(prompt, backend, config).output, "UserPromptSubmit")
    assert "Prefers pnpm over npm" in context
    assert estimate_tokens(context) <= config.prompt_tokens
    assert memory.list(limit=50).__len__() == 4  # a plain question stores nothing


def test_user_prompt_leaves_out_turns_of_the_current_session(
    memory: Memory, backend: EmbeddedBackend, config: HookConfig
) -> None:
    seed(memory)  # scores are normalised per search: give it more than two candidates
    memory.ingest(
        [{"role": "user", "content": "the flux capacitor needs 1.21 gigawatts"}],
        session_id=SESSION,
    )
    memory.ingest(
        [{"role": "user", "content": "in March the flux capacitor drew its power from plutonium"}],
        session_id="an-older-session",
    )
    prompt = payload("UserPromptSubmit", prompt="how much power does the flux capacitor need")
    found = backend.search(prompt["prompt"], user_prompt.SEARCH_LIMIT)
    assert any(r.memory.session_id == SESSION for r in found)  # the search does find it
    context = context_of(user_prompt.run(prompt, backend, config).output, "UserPromptSubmit")
    assert "in March the flux capacitor" in context
    assert "needs 1.21 gigawatts" not in context


def test_remember_this_is_stored_once_and_acknowledged(
    memory: Memory, backend: EmbeddedBackend, config: HookConfig
) -> None:
    prompt = payload(
        "UserPromptSubmit",
        prompt="Remember that staging runs on port 8443 <private>pw hunter2</private>. Thanks!",
    )
    for _ in range(2):
        context = context_of(user_prompt.run(prompt, backend, config).output, "UserPromptSubmit")
    stored = memory.list(limit=10)
    assert len(stored) == 1
    fact = stored[0]
    assert fact.content == "Remember that staging runs on port 8443 [REDACTED]."
    assert fact.memory_type is MemoryType.PINNED
    assert set(fact.tags) == {"remembered", "claude-code"} and fact.source == "claude-code"
    assert fact.key == memory_key("Remember that staging runs on port 8443 [REDACTED].")
    assert SAVED_NOTE in context and "hunter2" not in context


def test_chinese_remember_request_and_recall(
    memory: Memory, backend: EmbeddedBackend, config: HookConfig
) -> None:
    user_prompt.run(
        payload("UserPromptSubmit", prompt="记住我们的账单服务部署在法兰克福。"), backend, config
    )
    assert [m.content for m in memory.list()] == ["记住我们的账单服务部署在法兰克福。"]
    context = context_of(
        user_prompt.run(
            payload("UserPromptSubmit", prompt="账单服务部署在哪里?"), backend, config
        ).output,
        "UserPromptSubmit",
    )
    assert "法兰克福" in context


def test_a_bare_remember_request_asks_the_agent_to_store(
    memory: Memory, backend: EmbeddedBackend, config: HookConfig
) -> None:
    context = context_of(
        user_prompt.run(
            payload("UserPromptSubmit", prompt="remember this"), backend, config
        ).output,
        "UserPromptSubmit",
    )
    assert context == BARE_NOTE
    assert memory.list() == []


def test_an_empty_prompt_answers_nothing(backend: EmbeddedBackend, config: HookConfig) -> None:
    assert user_prompt.run(payload("UserPromptSubmit", prompt="  "), backend, config).output is None
    assert user_prompt.run(payload("UserPromptSubmit"), backend, config).output is None


# ---------------------------------------------------------------------- Stop / PreCompact
def session_rows(memory: Memory) -> list[Any]:
    return memory.list(memory_type="session", limit=100)


def test_stop_sends_the_recent_turns_to_smart_ingest(
    tmp_path: Path, memory: Memory, backend: EmbeddedBackend, config: HookConfig
) -> None:
    path = conversation(tmp_path / "t.jsonl").write()
    config = replace(config, ingest_wait_s=20)  # the rules take ~0.2 s; room for a busy machine
    result = capture.stop(payload("Stop", path, stop_hook_active=False), backend, config)
    assert result.output is None and result.pending_task is None  # rules finish in the wait
    turns = session_rows(memory)
    assert len(turns) == 6
    assert all(t.session_id == SESSION and t.source == "claude-code" for t in turns)
    assert all(set(t.tags) == {"auto-captured", "claude-code"} for t in turns)
    said = " ".join(t.content for t in turns)
    assert "pnpm" in said and "eu-west-1" in said
    assert "Sub-agent chatter" not in said and "Todo list" not in said and "KeyError" not in said
    task = memory.service.store.conn.execute(
        "SELECT status FROM tasks ORDER BY created_at DESC LIMIT 1"
    ).fetchone()
    assert task[0] == "completed"
    # the next Stop resends the same turns: they are stored once
    capture.stop(payload("Stop", path), backend, config)
    assert len(session_rows(memory)) == 6


def test_pre_compact_tags_and_the_longer_window(
    tmp_path: Path, memory: Memory, backend: EmbeddedBackend, config: HookConfig
) -> None:
    t = Transcript(tmp_path / "t.jsonl")
    for i in range(12):
        t.user(f"step {i}: set FEATURE_{i}=on in the config").say(f"FEATURE_{i} is on")
    path = t.write()
    capture.pre_compact(
        payload("PreCompact", path, trigger="auto", custom_instructions=""), backend, config
    )
    turns = session_rows(memory)
    assert len(turns) == 15
    assert all(set(t.tags) == {"pre-compact", "claude-code"} for t in turns)


def test_private_blocks_of_the_transcript_are_never_stored(
    tmp_path: Path, memory: Memory, backend: EmbeddedBackend, config: HookConfig
) -> None:
    t = Transcript(tmp_path / "t.jsonl")
    t.user("my token is <private>ghp_SECRET123</private>, deploy please").say("Deployed.")
    t.user("<private>entirely private turn</private>").say("Understood.")
    capture.stop(payload("Stop", t.write()), backend, config)
    said = " ".join(row.content for row in session_rows(memory))
    assert "ghp_SECRET123" not in said and "entirely private" not in said
    assert "[REDACTED]" in said


def test_too_little_to_capture_stores_nothing(
    tmp_path: Path, memory: Memory, backend: EmbeddedBackend, config: HookConfig
) -> None:
    one = Transcript(tmp_path / "one.jsonl").user("hello").write()
    assert capture.stop(payload("Stop", one), backend, config).output is None
    missing = payload("Stop", tmp_path / "missing.jsonl")
    assert capture.stop(missing, backend, config).output is None
    assert session_rows(memory) == []


def test_inline_messages_are_the_fallback(
    memory: Memory, backend: EmbeddedBackend, config: HookConfig
) -> None:
    body = payload(
        "Stop",
        None,
        messages=[
            {"role": "user", "content": "we pin node to 20.11"},
            {"role": "assistant", "content": "pinned"},
        ],
    )
    capture.stop(body, backend, config)
    assert len(session_rows(memory)) == 2


def test_the_prompt_budget_covers_the_notes_too(
    memory: Memory, backend: EmbeddedBackend, config: HookConfig
) -> None:
    seed(memory)
    for i in range(20):
        memory.add(f"Package manager note {i}: pnpm workspaces are used in repo {i}")
    tight = replace(config, prompt_tokens=120)
    said = payload(
        "UserPromptSubmit",
        prompt="Remember that the monorepo uses pnpm workspaces. Which package manager is it?",
    )
    context = context_of(user_prompt.run(said, backend, tight).output, "UserPromptSubmit")
    assert SAVED_NOTE in context and FENCE_OPEN in context
    assert estimate_tokens(context) <= 120
