"""Layered session memory: D6/D5 as a 200-turn session runs, D2/D1/D0 by offline
consolidation, retention, and consolidation killed mid-way resuming without duplicates."""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from datetime import timedelta
from pathlib import Path

import pytest

from memoryd.continuity import Continuity, Message, Owner, ToolUse
from memoryd.continuity.layers import EXCHANGES, GIST, OUTLINE, THEMES, TOKENS, SessionLayers
from memoryd.embed.local import LocalEmbedder
from memoryd.inject import estimate_tokens
from memoryd.models import utcnow
from memoryd.service import MemoryService

TOPICS = ["billing VAT lookup", "invoice rounding", "deploy pipeline", "CSV export", "auth tokens"]
START = utcnow() - timedelta(hours=3)


def turns(session: int, count: int = 200) -> list[Message | ToolUse]:
    """A long session: each turn a request, a tool call and an answer, timed like a transcript."""
    events: list[Message | ToolUse] = []
    for i in range(count):
        topic = TOPICS[i * len(TOPICS) // count]
        at = START + timedelta(seconds=10 * i)
        events.append(Message("user", f"Session {session} turn {i}: work on the {topic}", at))
        events.append(
            ToolUse("Edit", {"file_path": f"src/{topic.split()[0]}.py"}, f"t{session}-{i}", at)
        )
        events.append(
            Message("assistant", f"Fixed the {topic} (turn {i}).", at + timedelta(seconds=5))
        )
    return events


@pytest.fixture
def service(tmp_path: Path, embedder: LocalEmbedder) -> MemoryService:
    svc = MemoryService(tmp_path / "home", embedder=embedder)
    yield svc  # type: ignore[misc]
    svc.close()


def layer_rows(service: MemoryService, session: str) -> dict[int, dict[str, object]]:
    rows = service.store.session_layers(service.tenant_id, "coder", session)
    return {int(r["depth"]): r for r in rows}


def session_memories(service: MemoryService, session: str) -> list[str]:
    return [
        m.content
        for m in service.list_memories(limit=100, offset=0)[0]
        if m.session_id == session and "session-memory" in m.tags and m.superseded_by is None
    ]


def test_a_200_turn_session_condenses_to_d0_and_outlives_retention(service: MemoryService) -> None:
    continuity = Continuity(service, llm=None)
    owner = Owner("coder", "billing-week", "/repo/billing")
    events = turns(1)
    for i in range(0, len(events), 3):  # a save per turn, as the hooks do
        continuity.save(owner, events[: i + 3], trigger="agent_end")  # the hooks resend the tail
    raw = service.store.raw_messages(service.tenant_id, "coder", "billing-week")
    assert len(raw) == 600  # every message and tool call once, however often reported
    layers = SessionLayers(service, llm=None)
    d5 = layer_rows(service, "billing-week")[EXCHANGES]
    assert d5["basis"] == 600 and estimate_tokens(str(d5["content"])) <= TOKENS[EXCHANGES]
    assert str(d5["content"]).startswith("- User: Session 1 turn 0: work on the billing VAT")

    done = layers.consolidate("coder", "billing-week")
    assert [r["depth"] for r in done] == [OUTLINE, GIST, THEMES]
    rows = layer_rows(service, "billing-week")
    for depth in (OUTLINE, GIST, THEMES):
        assert estimate_tokens(str(rows[depth]["content"])) <= TOKENS[depth] + 30  # + header
        assert rows[depth]["memory_id"] and rows[depth]["expires_at"] is None
    assert "Goal: Session 1 turn 0: work on the billing VAT lookup" in str(rows[OUTLINE]["content"])
    assert str(rows[GIST]["content"]).startswith(
        "Gist of session billing-week (coder, /repo/billing"
    )
    assert len(session_memories(service, "billing-week")) == 3
    assert layers.consolidate_pending() == 0  # nothing stale: nothing done again

    hits = service.search("what did we do on the billing VAT lookup", limit=5).results
    gist = next(h.memory for h in hits if "d1" in h.memory.tags)
    assert (gist.session_id, gist.agent_id) == ("billing-week", "coder")

    assert layers.retain(utcnow() + timedelta(days=6)) == 0
    removed = layers.retain(utcnow() + timedelta(days=8))
    assert removed == 601  # D6 and D5
    rows = layer_rows(service, "billing-week")
    assert set(rows) == {OUTLINE, GIST, THEMES}
    assert service.store.raw_messages(service.tenant_id, "coder", "billing-week") == []
    hits = service.search("billing VAT lookup session gist", limit=5).results
    assert any(h.memory.session_id == "billing-week" and "d1" in h.memory.tags for h in hits)
    assert layers.consolidate_pending() == 0  # no D5 left: the kept layers are not rebuilt


def test_a_session_that_goes_on_is_condensed_again(service: MemoryService) -> None:
    layers = SessionLayers(service, llm=None)
    owner = Owner("coder", "s2", "")
    events = turns(2, count=20)
    layers.record(owner, events[:30])
    layers.consolidate("coder", "s2")
    first = layer_rows(service, "s2")[GIST]["memory_id"]
    layers.record(owner, events)
    assert layers.consolidate_pending() == 1
    rows = layer_rows(service, "s2")
    assert rows[GIST]["memory_id"] != first and rows[GIST]["basis"] == 60
    assert len(session_memories(service, "s2")) == 3  # the old layer memories superseded


CHILD = """
import sys
from memoryd.continuity.layers import SessionLayers
from memoryd.service import MemoryService

with MemoryService(sys.argv[1]) as service:
    print(SessionLayers(service, llm=None).consolidate_pending(), flush=True)
"""
SESSIONS = 6
ROUNDS = 4


def kept_layers(db: Path) -> int:
    """D2/D1/D0 rows written so far, read beside the running consolidation."""
    with closing(sqlite3.connect(db, timeout=30)) as conn:
        return int(
            conn.execute("SELECT COUNT(*) FROM session_layers WHERE depth IN (0, 1, 2)").fetchone()[
                0
            ]
        )


@pytest.mark.skipif(os.name == "nt", reason="SIGKILL")
def test_consolidation_killed_midway_resumes_without_duplicates(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with MemoryService(home) as service:
        layers = SessionLayers(service, llm=None)
        for n in range(SESSIONS):
            layers.record(Owner("coder", f"s{n}", "/repo"), turns(n, count=40))
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2] / "src")}
    db = home / "memoryd.db"
    total = 3 * SESSIONS
    rng = random.Random(3)
    cut_at: list[int] = []
    for _ in range(ROUNDS):  # each run killed once it has done part of the work
        done = kept_layers(db)
        if done >= total:
            break
        target = rng.randint(done + 1, total - 1) if done + 1 < total else total
        child = subprocess.Popen([sys.executable, "-c", CHILD, str(home)], env=env)
        deadline = time.monotonic() + 120
        while kept_layers(db) < target and child.poll() is None:
            assert time.monotonic() < deadline, "consolidation made no progress"
            time.sleep(0.01)
        if child.poll() is None:
            os.kill(child.pid, signal.SIGKILL)
            cut_at.append(kept_layers(db))
        child.wait()
    assert cut_at and all(0 < n < total for n in cut_at[:1])  # cut mid-way at least once
    final = subprocess.run([sys.executable, "-c", CHILD, str(home)], env=env, check=True)
    assert final.returncode == 0

    with MemoryService(home) as service:
        assert SessionLayers(service, llm=None).consolidate_pending() == 0
        for n in range(SESSIONS):
            rows = layer_rows(service, f"s{n}")
            assert set(rows) == {EXCHANGES, OUTLINE, GIST, THEMES}
            memories = session_memories(service, f"s{n}")
            assert len(memories) == 3, memories  # one per kept layer, never two
            assert {str(rows[d]["memory_id"]) for d in (OUTLINE, GIST, THEMES)} <= {
                m.id for m in service.list_memories(limit=1000, offset=0)[0]
            }


def test_delete_all_removes_checkpoints_and_layers(service: MemoryService) -> None:
    continuity = Continuity(service, llm=None)
    continuity.save(Owner("coder", "s", "/repo"), turns(7, count=3))
    SessionLayers(service, llm=None).consolidate("coder", "s")
    other = service.for_user("someone-else")
    Continuity(other, llm=None).save(Owner("coder", "s", "/repo"), turns(8, count=2))
    cleared = service.delete_all(confirm=True)["sessions_cleared"]
    assert cleared >= 1 + 9 + 4  # the checkpoint, the raw rows, D5 and the kept layers
    assert continuity.list() == [] and SessionLayers(service).layers() == []
    assert service.store.raw_messages(service.tenant_id, "coder", "s") == []
    assert len(Continuity(other, llm=None).list()) == 1  # another user's stay


def test_the_worker_pass_condenses_resting_sessions_of_every_tenant(
    service: MemoryService,
) -> None:
    from memoryd.continuity.worker import run_pass

    SessionLayers(service, llm=None).record(Owner("a", "s1"), turns(1, count=4))
    other = service.for_user("bob")
    SessionLayers(other, llm=None).record(Owner("b", "s2"), turns(2, count=4))
    assert run_pass(service) == {"consolidated": 0, "expired": 0}  # both still running
    assert run_pass(service, idle_s=0) == {"consolidated": 2, "expired": 0}
    assert {r["depth"] for r in SessionLayers(other).layers()} == {0, 1, 2, 5}


def test_a_very_long_session_keeps_its_start_and_its_newest_exchanges(
    service: MemoryService,
) -> None:
    layers = SessionLayers(service, llm=None)
    events = turns(9, count=700)  # 2,100 raw rows: more than a D5 rebuild reads
    for start in range(0, len(events), 300):
        layers.record(Owner("coder", "long"), events[start : start + 300])
    d5 = layer_rows(service, "long")[EXCHANGES]
    lines = str(d5["content"]).splitlines()
    assert lines[0].startswith("- User: Session 9 turn 0: work on the billing VAT lookup")
    assert lines[1] == "- … earlier exchanges left out"
    assert "turn 699" in lines[-1] and d5["basis"] == 2100
    assert estimate_tokens(str(d5["content"])) <= TOKENS[EXCHANGES]


def test_themes_are_the_sessions_words_not_the_outline_template() -> None:
    from memoryd.continuity.extract import extract_outline, extract_themes

    d5 = "- User: plan a hiking trip → Assistant: Try the Alta Via trail in July."
    outline = extract_outline(d5, "[session s1]")
    themes = extract_themes(outline, "[session s1]").removeprefix("[session s1] ").split(", ")
    assert "hiking" in themes
    assert not {"goal", "steps", "outcome", "next"} & set(themes)
