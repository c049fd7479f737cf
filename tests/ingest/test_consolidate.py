"""Consolidation: duplicates merged, contradictions resolved, nothing lost (history, as_of)."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from memoryd.embed.local import LocalEmbedder
from memoryd.ingest import consolidate as consolidation
from memoryd.ingest.consolidate import (
    CONSOLIDATE,
    Consolidation,
    Schedule,
    start_consolidation_worker,
)
from memoryd.ingest.direct import build_direct_memory
from memoryd.ingest.reconcile import Decision, slot_decision
from memoryd.ingest.smart import facts_from_rules
from memoryd.jobs.worker import TaskInterrupted
from memoryd.llm.openai_compat import OpenAICompatibleLLM
from memoryd.models import Category, Memory, MemoryType
from memoryd.sdk import Memory as SdkMemory
from memoryd.service import MemoryService
from memoryd.store import MemoryFilter

sys.path.insert(0, str(Path(__file__).parents[1] / "llm"))
sys.path.insert(0, str(Path(__file__).parents[1] / "server"))
from scripted_llm import ScriptedLLM
from server_harness import create_tenant, memoryd_command, start_server

BEFORE = datetime(2026, 6, 1, tzinfo=UTC)  # after every seeded fact was said, before the run


def month(n: int) -> datetime:
    return datetime(2026, n, 1, tzinfo=UTC)


def seed(svc: MemoryService, said: str, when: datetime, *, rules: bool = True) -> Memory:
    """A memory as an older store or an import left it: distilled, never reconciled."""
    facts = facts_from_rules([("user", said)]) if rules else []
    content, category, marks = said, Category.ENTITIES, []
    if facts:
        content, category, marks = facts[0].content, facts[0].category, facts[0].slot_marks()
    memory = build_direct_memory(
        content,
        tenant_id=svc.tenant_id,
        space_id=svc.space_id,
        memory_type=MemoryType.INSIGHT,
        category=category,
        marks=marks,
        valid_from=when,
        l1_overview=said,
    )
    svc.store.insert_memories([memory], svc.embed([content]))
    return memory


def seed_messy(svc: MemoryService) -> dict[str, Memory]:
    return {
        "berlin": seed(svc, "I live in Berlin.", month(1)),
        "munich": seed(svc, "I live in Munich.", month(3)),
        "hiking": seed(svc, "I love hiking in the mountains.", month(2)),
        "hiking again": seed(svc, "I love hiking in the mountains.", month(4)),
        "hiking loudly": seed(svc, "I really love hiking in the mountains!", month(5)),
        "coffee": seed(svc, "I prefer coffee in the morning.", month(1)),
        "tea now": seed(svc, "I prefer tea in the morning now.", month(4)),
        "laptop": seed(svc, "My laptop is a ThinkPad X1 Carbon.", month(2), rules=False),
        "laptop again": seed(svc, "My laptop is a ThinkPad X1 Carbon", month(3), rules=False),
        "vegetarian": seed(svc, "I am vegetarian.", month(2)),
    }


def live(svc: MemoryService) -> list[Memory]:
    return Consolidation(svc.memories).live()


def assert_consolidated(svc: MemoryService, seeded: dict[str, Memory]) -> None:
    """No duplicate active memory, no contradiction, and every removed fact reachable."""
    active = live(svc)
    ids = {m.id for m in active}
    # no duplicate: neither the same words nor a near-identical vector
    words = [" ".join(m.content.casefold().rstrip(".!").split()) for m in active]
    assert len(words) == len(set(words)), words
    vectors = svc.store.vectors_of(list(ids))
    for a, b in itertools.combinations(active, 2):
        cosine = float(np.dot(vectors[a.id], vectors[b.id]))
        assert cosine < 0.95, (a.content, b.content, cosine)
    # no contradiction: no active memory changes or repeats the slot of another
    for a, b in itertools.permutations(active, 2):
        fact = consolidation.fact_of(a)
        assert slot_decision(fact, b) not in (Decision.SUPERSEDE, Decision.SUPPORT), (
            a.content,
            b.content,
        )
    assert seeded["munich"].id in ids and seeded["berlin"].id not in ids
    assert seeded["vegetarian"].id in ids
    assert sum(k.startswith("hiking") and m.id in ids for k, m in seeded.items()) == 1
    assert sum(k.startswith("laptop") and m.id in ids for k, m in seeded.items()) == 1
    # every removed fact: in its history, and found by as_of a time it held
    removed = [m for m in seeded.values() if m.id not in ids]
    assert len(removed) >= 5
    for memory in removed:
        now = svc.get(memory.id)
        assert now.superseded_by in ids or now.superseded_by in {m.id for m in removed}
        history = svc.history(memory.id)
        assert any(row["action"] == "update" for row in history), history
        at = max(now.valid_from or BEFORE, BEFORE) if now.valid_to is None else now.valid_from
        found = svc.search(memory.content, as_of=at, limit=20, touch=False).results
        assert memory.id in [r.memory.id for r in found], memory.content
    berlin_then = svc.search("where does the user live", as_of=month(2), touch=False).results
    assert "Berlin" in berlin_then[0].memory.content
    munich_now = svc.search("where does the user live", touch=False).results
    assert "Munich" in munich_now[0].memory.content


@pytest.fixture
def memory(home: Path, embedder: LocalEmbedder) -> Iterator[SdkMemory]:
    mem = SdkMemory(home, embedder=embedder)
    yield mem
    mem.close()


def test_consolidation_without_an_llm_leaves_no_duplicate_and_no_contradiction(
    memory: SdkMemory,
) -> None:
    svc = memory.service
    seeded = seed_messy(svc)
    task = memory.consolidate()
    assert task["status"] == "completed", task
    assert task["kind"] == CONSOLIDATE and task["consolidator"] == "rules"
    assert task["memories_checked"] == len(seeded)
    assert task["retired"] == 5, task
    assert_consolidated(svc, seeded)
    again = memory.consolidate()  # nothing left to do: idempotent
    assert again["retired"] == 0


def test_consolidation_with_an_llm_merges_with_history(memory: SdkMemory) -> None:
    svc = memory.service
    older = seed(svc, "The user enjoys hiking on weekends.", month(1), rules=False)
    newer = seed(svc, "On weekends the user goes hiking in the Alps.", month(2), rules=False)
    merged = "The user goes hiking in the Alps on weekends."
    answer = {
        "decisions": [{"fact_index": 0, "decision": "merge", "target": 0, "merged_content": merged}]
    }
    with ScriptedLLM() as scripted:
        scripted.script(json.dumps(answer))
        llm = OpenAICompatibleLLM("test-model", scripted.url)
        result = Consolidation(svc.memories, llm).run()
        prompt = scripted.chat_requests[0].messages[1]["content"]
    assert "On weekends the user goes hiking in the Alps." in prompt
    assert result["consolidator"] == "llm" and result["decisions"] == {"merge": 1}
    # merged onto the one said later: consolidation never retires the newer statement
    assert svc.get(newer.id).content == merged
    assert svc.get(older.id).superseded_by == newer.id
    history = svc.history(newer.id)
    assert any("goes hiking in the Alps" in json.dumps(row) for row in history), history
    assert "enjoys hiking on weekends" in svc.get(older.id).content  # kept, for as_of
    assert [m.id for m in live(svc)] == [newer.id]


def test_a_model_that_names_a_memory_it_was_not_shown_changes_nothing(
    memory: SdkMemory,
) -> None:
    svc = memory.service
    seed(svc, "The user enjoys hiking on weekends.", month(1), rules=False)
    seed(svc, "On weekends the user goes hiking in the Alps.", month(2), rules=False)
    answer = {"decisions": [{"fact_index": 0, "decision": "supersede", "target": 7}]}
    with ScriptedLLM() as scripted:
        scripted.script(json.dumps(answer))
        result = Consolidation(svc.memories, OpenAICompatibleLLM("m", scripted.url)).run()
    assert result["retired"] == 0
    assert len(live(svc)) == 2


class StopAfter(threading.Event):
    """The process's stop flag, raised after ``n`` checks (a Ctrl-C mid-run)."""

    def __init__(self, n: int) -> None:
        super().__init__()
        self.left = n

    def is_set(self) -> bool:
        self.left -= 1
        return self.left < 0


def test_an_interrupted_consolidation_resumes_where_it_stopped(
    memory: SdkMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    svc = memory.service
    seeded = seed_messy(svc)
    monkeypatch.setattr(consolidation, "BATCH", 3)
    with pytest.raises(TaskInterrupted):
        Consolidation(svc.memories, interrupted=StopAfter(2)).run()
    assert 0 < len(seeded) - len(live(svc)) < 5  # part of the work is done
    Consolidation(svc.memories).run()
    assert_consolidated(svc, seeded)


def test_a_run_left_by_a_dead_worker_is_finished_by_the_next(memory: SdkMemory) -> None:
    svc = memory.service
    seeded = seed_messy(svc)
    gone = subprocess.Popen(["true"])
    gone.wait()
    with svc.store.write() as conn:
        svc.store.record_task(
            conn, "orphan-run", svc.tenant_id, svc.space_id, CONSOLIDATE, "running", {}, {}
        )
        conn.execute(
            "UPDATE tasks SET claimed_by = ? WHERE id = 'orphan-run'",
            (f"{socket.gethostname()}:{gone.pid}/0",),
        )
    start_consolidation_worker(svc.engine)
    task = svc.wait_for_task("orphan-run", 60)
    assert task["status"] == "completed", task
    assert_consolidated(svc, seeded)


def test_the_schedule_queues_one_run_per_tenant(memory: SdkMemory) -> None:
    svc = memory.service
    seeded = seed_messy(svc)
    other = svc.for_user("someone")
    seed(other, "I live in Oslo.", month(1))
    seed(other, "I live in Bergen.", month(2))
    task_ids = Schedule(svc.engine, 3600).run_once()
    assert len(task_ids) == 2
    views = sorted([svc, other], key=lambda s: s.tenant_id)  # the schedule's order
    for task_id, view in zip(task_ids, views, strict=True):
        assert view.wait_for_task(task_id, 60)["status"] == "completed"
    assert_consolidated(svc, seeded)
    assert ["Bergen" in m.content for m in live(other)] == [True]


def test_consolidation_over_rest_and_the_remote_sdk(
    tmp_path: Path, embedder: LocalEmbedder
) -> None:
    from memoryd.client import RemoteMemory

    running, stop = start_server(tmp_path / "served", embedder)
    try:
        tenant_id, key = create_tenant(running, "consolidating")
        seeded = seed_messy(running.service.for_tenant(tenant_id))
        with running.client(key) as http:
            accepted = http.post("/v1/consolidate")
        assert accepted.status_code == 202, accepted.text
        assert accepted.json()["status_url"] == f"/v1/tasks/{accepted.json()['task_id']}"
        with RemoteMemory(running.url, key) as remote:
            task = remote.wait_for_task(accepted.json()["task_id"], 60)
            assert task["status"] == "completed" and task["retired"] == 5, task
            assert remote.consolidate()["retired"] == 0
        assert_consolidated(running.service.for_tenant(tenant_id), seeded)
    finally:
        stop()


def test_the_consolidate_command(home: Path, embedder: LocalEmbedder) -> None:
    with MemoryService(home, embedder=embedder) as svc:
        seeded = seed_messy(svc)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2] / "src")}
    done = subprocess.run(
        memoryd_command(home, "consolidate", "--json"),
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    task = json.loads(done.stdout)
    assert task["status"] == "completed" and task["retired"] == 5
    with MemoryService(home, embedder=embedder) as svc:
        assert_consolidated(svc, seeded)
        assert svc.store.count(svc.tenant_id, [svc.space_id], MemoryFilter()) >= len(seeded)


def test_the_async_sdk_consolidates(home: Path, embedder: LocalEmbedder) -> None:
    from memoryd.aio import AsyncMemory

    async def run() -> dict[str, object]:
        async with AsyncMemory(home, embedder=embedder) as mem:
            seed_messy(mem.sync.service)
            return await mem.consolidate()

    task = asyncio.run(run())
    assert task["status"] == "completed" and task["retired"] == 5
