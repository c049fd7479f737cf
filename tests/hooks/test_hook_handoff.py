"""SessionEnd written down and done by a background process: quick for the host, never lost.

Claude Code gives a plugin's SessionEnd hooks 1.5 seconds in all, in print
mode too, and cancels the hook (and every process under it) past that. The
hook process therefore only writes the hook down and starts ``memoryd hook
handed-off`` detached; these tests drive real processes (``python -m
memoryd``, what the console script runs) and check what the background
process leaves in the store, and what happens to a record nobody did.
"""

from __future__ import annotations

import json
import os
import socket
import time
from pathlib import Path

from cc_transcript import CWD, SESSION, conversation, payload
from hook_helpers import clean_env, hook_log, memoryd, wait_for

from memoryd.continuity import Continuity
from memoryd.embed.local import LocalEmbedder
from memoryd.hooks import handoff
from memoryd.hooks.config import ENV_AGENT_ID, ENV_HTTP_TIMEOUT, ENV_URL
from memoryd.hooks.runner import run_handed_off
from memoryd.sdk import Memory

# a background process loads memoryd and opens the store: seconds on a busy 2-core machine
BACKGROUND_S = 60.0
# what the hook process must not load: the command line, the store, the model
HEAVY = ("memoryd.cli", "memoryd.sdk", "memoryd.service", "memoryd.embed", "memoryd.hooks.runner")


def checkpoints(home: Path, embedder: LocalEmbedder) -> list[tuple[str, str, str]]:
    with Memory(home, embedder=embedder) as memory:
        found = Continuity(memory.service, llm=None).list(agent_id="claude-code")
    return [(c.session_id, c.project, c.trigger) for c in found]


def session_end_body(tmp_path: Path) -> str:
    transcript = conversation(tmp_path / f"{SESSION}.jsonl").write()
    return json.dumps(payload("SessionEnd", transcript, reason="prompt_input_exit"))


def test_the_hook_writes_it_down_and_the_background_process_saves_it(
    home: Path, tmp_path: Path, embedder: LocalEmbedder
) -> None:
    env = clean_env(MEMORYD_HOME=str(home), MEMORYD_API_KEY="mk_secret")
    ran = memoryd(["hook", "session-end"], env, session_end_body(tmp_path), "-X", "importtime")
    assert (ran.code, ran.out) == (0, "")
    imported = {line.rsplit("|", 1)[-1].strip() for line in ran.err.splitlines()}
    assert "memoryd.hooks.handoff" in imported
    assert not imported & set(HEAVY), "the hook loaded what the background process is for"

    wait_for(
        lambda: "session-end: done in the background" in hook_log(home), "the save", BACKGROUND_S
    )
    assert checkpoints(home, embedder) == [(SESSION, CWD, "session_end")]
    assert "consolidate: session" in hook_log(home)  # done in the same process
    wait_for(lambda: handoff._records(home) == [], "the record to go", BACKGROUND_S)


def test_each_session_end_is_done_once_in_the_background(home: Path, tmp_path: Path) -> None:
    env = clean_env(MEMORYD_HOME=str(home))
    body = session_end_body(tmp_path)
    for _ in range(3):
        assert memoryd(["hook", "session-end"], env, body).code == 0
    wait_for(lambda: handoff._records(home) == [], "the records to be done", BACKGROUND_S)
    assert hook_log(home).count("session-end: done in the background") == 3


def test_a_record_names_the_store_and_the_agent_and_holds_no_secret(tmp_path: Path) -> None:
    environ = {
        "MEMORYD_URL": "http://127.0.0.1:9",
        "MEMORYD_API_KEY": "mk_secret",
        "OMEM_API_KEY": "ok_secret",
        "MEMORYD_LLM_API_KEY": "sk-secret",
        "MEMORYD_DATABASE_URL": "postgresql://me:secret@db/memoryd",
        "MEMORYD_AGENT_ID": "cc",
        "PATH": "/usr/bin",
    }
    path = handoff.write(tmp_path, "session-end", b'{"session_id": "s"}', environ)
    record = json.loads(path.read_text(encoding="utf-8"))
    assert record["env"] == {"MEMORYD_URL": "http://127.0.0.1:9", "MEMORYD_AGENT_ID": "cc"}
    assert "secret" not in path.read_text(encoding="utf-8")
    assert record["payload"] == '{"session_id": "s"}'
    # what HookConfig reads to pick the store and the agent, and nothing else
    assert set(handoff.RECORDED) == {*ENV_URL, ENV_AGENT_ID, ENV_HTTP_TIMEOUT}
    # a later try: the record's store and agent, this environment's key
    later = {"OMEM_API_URL": "http://elsewhere", "MEMORYD_API_KEY": "mk_now", "PATH": "/bin"}
    assert handoff.environment(record["env"], later) == {
        "MEMORYD_URL": "http://127.0.0.1:9",
        "MEMORYD_AGENT_ID": "cc",
        "MEMORYD_API_KEY": "mk_now",
        "PATH": "/bin",
    }
    assert path.parent == tmp_path / "pending-hooks"
    if os.name == "posix":
        assert path.parent.stat().st_mode & 0o777 == 0o700
        assert path.stat().st_mode & 0o077 == 0


def age(path: Path, seconds: float) -> None:
    then = time.time() - seconds
    os.utime(path, (then, then))


def test_a_record_left_behind_is_done_by_the_next_session_start(
    home: Path, tmp_path: Path, embedder: LocalEmbedder
) -> None:
    env = clean_env(MEMORYD_HOME=str(home))
    left = handoff.write(home, "session-end", session_end_body(tmp_path).encode(), env)
    fresh = memoryd(["hook", "session-start"], env, json.dumps(payload("SessionStart")))
    assert fresh.code == 0, fresh.err
    time.sleep(1.0)
    assert left.exists()  # written a moment ago: its own process may still be starting
    assert "session-end: done in the background" not in hook_log(home)

    age(left, handoff.RETRY_AFTER_S + 1)
    later = memoryd(["hook", "session-start"], env, json.dumps(payload("SessionStart")))
    assert later.code == 0, later.err
    wait_for(lambda: not left.exists(), "the record left behind to be done", BACKGROUND_S)
    assert checkpoints(home, embedder) == [(SESSION, CWD, "session_end")]


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def test_a_save_that_fails_is_kept_for_another_try_until_it_is_too_old(
    home: Path, tmp_path: Path
) -> None:
    down = {"MEMORYD_URL": f"http://127.0.0.1:{closed_port()}"}
    body = session_end_body(tmp_path).encode()
    kept = handoff.write(home, "session-end", body, down)
    assert run_handed_off(home=home) == 0
    assert kept.exists()
    assert "session-end failed (server error: cannot reach" in hook_log(home)
    assert "kept for another try" in hook_log(home)

    age(kept, handoff.MAX_AGE_S + 60)
    assert run_handed_off(home=home) == 0
    assert not kept.exists()
    assert "still fails: dropped" in hook_log(home)


def test_a_record_held_by_one_process_is_not_done_by_another(home: Path, tmp_path: Path) -> None:
    handoff.write(home, "session-end", b"{}", {})
    handoff.write(home, "session-end", b"{}", {})
    first = handoff.claim_each(home)
    held = next(first)
    assert handoff.waiting(home, older_than_s=0) == handoff._records(home)[1:]
    others = list(handoff.claim_each(home))  # the second one only
    assert len(others) == 1 and others[0].path != held.path
    held.done = True
    rest = list(first)  # the second one again, free now, and still not done
    assert [r.path for r in rest] == [others[0].path]
    assert handoff._records(home) == [others[0].path]  # not done: kept


def test_a_broken_record_is_removed(home: Path) -> None:
    (home / "pending-hooks").mkdir(parents=True)
    broken = home / "pending-hooks" / "1-1-session-end.json"
    broken.write_text("{not json", encoding="utf-8")
    assert list(handoff.claim_each(home)) == []
    assert not broken.exists()
