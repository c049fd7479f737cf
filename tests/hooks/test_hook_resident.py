"""The resident hook process: started by the first prompt hook, answering the next ones warm.

Real processes throughout: ``python -m memoryd`` (what the ``memoryd``
console script runs) for the hooks, ``memoryd hook resident`` detached, a
real Unix socket. Every test stops what it started.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from cc_transcript import payload
from hook_helpers import Ran, clean_env, hook_log, memoryd, wait_for

from memoryd.embed.local import LocalEmbedder
from memoryd.hooks.resident import _hook_command, enabled, idle_minutes, is_running, socket_path
from memoryd.sdk import Memory

PROMPT = {"hook_event_name": "UserPromptSubmit", "session_id": "s", "prompt": "what do I prefer?"}
# a resident loads the model before it listens: seconds on a busy 2-core machine
START_S = 90.0


@pytest.fixture
def seeded(tmp_path: Path, embedder: LocalEmbedder) -> Path:
    home = tmp_path / "home"
    with Memory(home, embedder=embedder) as memory:
        memory.add("Prefers pnpm over npm", category="preferences")
    return home


@pytest.fixture
def env(seeded: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, str]]:
    """The resident on, its socket in a short private folder; stopped at the end."""
    runtime = tempfile.mkdtemp(prefix="md")
    monkeypatch.setenv("XDG_RUNTIME_DIR", runtime)  # is_running() here looks there too
    environ = clean_env(
        MEMORYD_HOME=str(seeded), MEMORYD_HOOK_RESIDENT="1", XDG_RUNTIME_DIR=runtime
    )
    yield environ
    memoryd(["hook", "resident", "--stop"], environ)
    wait_for(lambda: not socket_path(seeded).exists(), "the resident to stop", 30)
    shutil.rmtree(runtime, ignore_errors=True)


def context_of(ran: Ran) -> str:
    assert ran.code == 0, ran.err
    return str(ran.json()["hookSpecificOutput"]["additionalContext"])


def test_the_first_prompt_starts_the_resident_which_answers_the_next_ones(
    seeded: Path, env: dict[str, str]
) -> None:
    first = memoryd(["hook", "user-prompt"], env, stdin=payload_text(PROMPT))
    assert "Prefers pnpm over npm" in context_of(first)
    assert "started one, answering in process" in hook_log(seeded)
    wait_for(lambda: is_running(seeded), "the resident to listen", START_S)

    second = memoryd(["hook", "user-prompt"], env, stdin=payload_text(PROMPT))
    assert second.out == first.out  # the same answer, from the warm process
    assert "user-prompt: answered by the resident" in hook_log(seeded)
    started = memoryd(["hook", "session-start"], env, stdin=payload_text(payload("SessionStart")))
    assert "Prefers pnpm over npm" in context_of(started)
    assert "session-start: answered by the resident" in hook_log(seeded)
    # the resident sees what other processes write to the home
    with Memory(seeded) as memory:
        memory.add("Deploys go out on Fridays with a blue-green rollout")
    asked = {**PROMPT, "prompt": "when do deploys go out?"}
    assert "blue-green rollout" in context_of(
        memoryd(["hook", "user-prompt"], env, payload_text(asked))
    )


def test_one_resident_per_home_however_many_hooks_start_one(
    seeded: Path, env: dict[str, str]
) -> None:
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "memoryd", "hook", "resident"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for _ in range(3)
    ]
    try:
        wait_for(
            lambda: sum(p.poll() is None for p in procs) == 1, "two of three to give way", START_S
        )
        assert [p.returncode for p in procs if p.poll() is not None] == [0, 0]
        wait_for(lambda: is_running(seeded), "the one left to listen", START_S)
        assert "one already runs for" in hook_log(seeded)
    finally:
        memoryd(["hook", "resident", "--stop"], env)
        for p in procs:
            p.wait(timeout=60)
    assert all(p.returncode == 0 for p in procs)


def test_an_idle_resident_exits_and_removes_its_socket(seeded: Path, env: dict[str, str]) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "memoryd", "hook", "resident", "--idle", "0.05"],  # 3 seconds
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wait_for(lambda: is_running(seeded), "the resident to listen", START_S)
    assert proc.wait(timeout=60) == 0
    assert not socket_path(seeded).exists()
    assert "resident: stopping (idle for 0.05 min)" in hook_log(seeded)


def test_a_resident_that_hangs_up_costs_the_hook_its_injection_not_the_prompt(
    seeded: Path, env: dict[str, str]
) -> None:
    path = socket_path(seeded)
    path.parent.mkdir(parents=True, exist_ok=True)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as broken:
        broken.bind(str(path))
        broken.listen()

        def hang_up() -> None:
            conn, _ = broken.accept()
            conn.recv(1 << 16)
            conn.close()

        threading.Thread(target=hang_up, daemon=True).start()
        ran = memoryd(["hook", "user-prompt"], env, stdin=payload_text(PROMPT))
    path.unlink()
    assert (ran.code, ran.out) == (0, "")
    assert "the resident process did not answer" in hook_log(seeded)


def test_the_resident_is_off_when_a_server_is_set_or_when_turned_off() -> None:
    assert enabled({})
    assert not enabled({"MEMORYD_HOOK_RESIDENT": "0"})
    assert not enabled({"MEMORYD_URL": "http://127.0.0.1:8080"})
    assert not enabled({"OMEM_API_URL": "https://api.example"})
    assert idle_minutes({"MEMORYD_HOOK_RESIDENT_IDLE": "5"}) == 5.0
    assert idle_minutes({"MEMORYD_HOOK_RESIDENT_IDLE": "soon"}) == 30.0


def test_the_reading_hooks_and_session_end_take_the_fast_path() -> None:
    assert _hook_command(["hook", "user-prompt"]) == ("user-prompt", None)
    assert _hook_command(["hook", "session-end"]) == ("session-end", None)  # handed off
    assert _hook_command(["--home", "/h", "hook", "session-start"]) == (
        "session-start",
        Path("/h"),
    )
    assert _hook_command(["--home=/h", "hook", "user-prompt"]) == ("user-prompt", Path("/h"))
    for args in (["hook", "stop"], ["list"], ["hook", "user-prompt", "--help"], ["--json", "hook"]):
        assert _hook_command(args) is None


def payload_text(body: dict[str, object]) -> str:
    return json.dumps(body)
