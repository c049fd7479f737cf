"""Remembering an exchange (smart ingest, the rules of every door) and recall (strategies,
budget, retention)."""

from __future__ import annotations

import os
import signal
import time
from datetime import timedelta
from typing import Any

import pytest

from memoryd.inject import FENCE_OPEN, estimate_tokens
from memoryd.models import MemoryType, utcnow
from memoryd.proxy.extract import Exchange, Extractor, remember
from memoryd.proxy.recall import SHORT_QUERY_CHARS, query_of, recall_block
from memoryd.proxy.settings import MemorySettings
from memoryd.service import MemoryService
from memoryd.store.rows import to_us


# ---------------------------------------------------------------------- remembering
def exchange(svc: MemoryService, *said: str) -> Exchange:
    return Exchange(svc.tenant_id, tuple(said), "session-1", "gpt-4o")


def distilled(svc: MemoryService) -> list[tuple[str, str]]:
    rows = svc.list_memories(limit=100, current=True)[0]
    return sorted((m.content, m.category.value) for m in rows)


def test_an_exchange_is_distilled_by_the_ingest_rules_one_memory_a_fact(
    service: MemoryService,
) -> None:
    said = (
        "Hi! I prefer Python over Go. We decided to use Postgres for the ledger.\n"
        "I usually deploy on Fridays. What is the weather like?"
    )
    task = remember(service, exchange(service, said), "Noted: Python, Postgres, Fridays.")
    assert task is not None
    service.wait_for_task(task)
    # seed 002's preference, decision and habit, each once: no pinned twin beside a fact
    assert distilled(service) == [
        ("The user decided to use Postgres for the ledger.", "cases"),
        ("The user prefers Python over Go.", "preferences"),
        ("The user usually deploys on Fridays.", "patterns"),
    ]
    turns = service.list_memories(memory_type=MemoryType.SESSION, limit=100)[0]
    assert sorted(m.content for m in turns) == [
        "assistant: Noted: Python, Postgres, Fridays.",
        f"user: {said}",
    ]


def test_remembering_twice_stores_the_fact_once_and_private_text_never(
    service: MemoryService,
) -> None:
    for _ in range(2):
        said = "I prefer Python over Go. <private>I always hide my salary.</private>"
        task = remember(service, exchange(service, said), "Noted.")
        assert task is not None
        service.wait_for_task(task)
    assert distilled(service) == [("The user prefers Python over Go.", "preferences")]
    assert not any("salary" in m.content for m in service.list_memories(limit=100)[0])


def test_an_exchange_with_nothing_said_stores_nothing(service: MemoryService) -> None:
    assert remember(service, exchange(service, "  "), None) is None
    assert service.list_memories(limit=10, memory_type=MemoryType.SESSION)[1] == 0


# ---------------------------------------------------------------------- recall
def test_the_query_is_the_last_user_message_with_the_one_before_when_short() -> None:
    long = "Which database should the accounting service use for its ledger?"
    assert len(long) >= SHORT_QUERY_CHARS
    assert query_of([("user", "first"), ("assistant", "a"), ("user", long)]) == long
    assert query_of([("user", long), ("assistant", "a"), ("user", "and why?")]) == (
        f"{long}\nand why?"
    )
    assert query_of([("assistant", "hello")]) == ""


def add(svc: MemoryService, content: str, **fields: Any) -> str:
    return svc.add(content, **fields).id


def age(svc: MemoryService, memory_id: str, days: int) -> None:
    with svc.store.write() as conn:
        conn.execute(
            "UPDATE memories SET created_at = ? WHERE id = ?",
            (to_us(utcnow() - timedelta(days=days)), memory_id),
        )


CONVERSATION = [("user", "Which editor settings should I use for my Python project?")]


@pytest.mark.parametrize("strategy", ["recent", "semantic", "hybrid"])
def test_strategies_retention_and_expiry(service: MemoryService, strategy: str) -> None:
    # keys of their own: three memories side by side, none replacing another
    add(service, "The user writes Python in the Helix editor with four-space indents", key="a")
    old = add(service, "The user wrote Python in Emacs with tabs", key="b")
    age(service, old, 40)  # past the 30 days kept by default
    add(
        service,
        "The user favours the Zed editor for Python",
        expires_at=utcnow() + timedelta(seconds=1),
        key="c",
    )
    with service.store.write() as conn:  # and that one has expired since
        conn.execute(
            "UPDATE memories SET expires_at = ? WHERE content LIKE '%Zed%'",
            (to_us(utcnow() - timedelta(minutes=1)),),
        )
    settings = MemorySettings(strategy=strategy)
    block = recall_block(service, settings, CONVERSATION)
    assert block.startswith(FENCE_OPEN)
    assert "Helix" in block
    assert "Emacs" not in block and "Zed" not in block
    assert "Emacs" in recall_block(
        service, MemorySettings(strategy=strategy, retention_days=60), CONVERSATION
    )


def test_recent_needs_no_query_and_semantic_needs_one(service: MemoryService) -> None:
    add(service, "The user keeps bees")
    assert "bees" in recall_block(service, MemorySettings(strategy="recent"), [])
    assert recall_block(service, MemorySettings(strategy="semantic"), []) == ""


def test_the_budget_is_kept_by_the_cjk_aware_estimate(service: MemoryService) -> None:
    for i in range(30):
        add(service, f"用户喜欢在周末去第{i}个公园散步，并且喜欢拍摄花朵和鸟类的照片")
    block = recall_block(service, MemorySettings(strategy="recent", max_tokens=300), [])
    assert block and estimate_tokens(block) <= 300
    assert len(block) < 300 * 4 / 2  # by len / 4 the same block would have been far longer
    big = recall_block(service, MemorySettings(strategy="recent", max_tokens=16000), [])
    assert big.count("公园") == 30


def test_memory_off_or_a_zero_budget_recalls_nothing(service: MemoryService) -> None:
    add(service, "The user keeps bees")
    assert recall_block(service, MemorySettings(enabled=False, strategy="recent"), []) == ""
    assert recall_block(service, MemorySettings(max_tokens=0, strategy="recent"), []) == ""


def test_a_named_session_narrows_recall(service: MemoryService) -> None:
    add(service, "The user keeps bees", session_id="garden")
    add(service, "The user plays chess", session_id="games")
    block = recall_block(service, MemorySettings(strategy="recent"), [], session_id="garden")
    assert "bees" in block and "chess" not in block


def test_a_helper_process_that_dies_is_replaced_and_nothing_is_lost(
    service: MemoryService,
) -> None:
    extractor = Extractor(service.settings)
    try:
        extractor.submit(exchange(service, "I prefer tea."), "Tea it is.").result(timeout=120)
        pool = extractor._pool
        assert pool is not None
        [pid] = list(pool._processes)  # the helper: a real process, killed as a crash would
        # it runs only on a core nothing else wants (Linux), or at least at a lower priority
        if hasattr(os, "SCHED_IDLE"):
            assert os.sched_getscheduler(pid) == os.SCHED_IDLE
        else:
            assert os.getpriority(os.PRIO_PROCESS, pid) > os.getpriority(os.PRIO_PROCESS, 0)
        os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 30
        while not pool._broken and time.monotonic() < deadline:
            time.sleep(0.05)
        extractor.submit(exchange(service, "I prefer coffee."), "Coffee then.").result(timeout=120)
    finally:
        extractor.close()
    turns = service.list_memories(limit=100, memory_type=MemoryType.SESSION)[0]
    assert {"user: I prefer tea.", "user: I prefer coffee."} <= {m.content for m in turns}


def test_the_conversation_in_progress_is_not_recalled_into_itself(
    service: MemoryService,
) -> None:
    add(service, "I drive a Honda Civic")
    asked = [{"role": "user", "content": "What car do I drive?"}]
    service.ingest([*asked, {"role": "assistant", "content": "Let me check."}], session_id="now")
    messages = [("user", "What car do I drive?"), ("assistant", "Let me check."), ("user", "ok?")]
    block = recall_block(service, MemorySettings(), messages, exclude_session="now")
    assert "Honda Civic" in block
    assert "Let me check" not in block and "user: What car" not in block, block


def test_hybrid_brings_nothing_unrelated_to_the_question(service: MemoryService) -> None:
    add(service, "I drive a Honda Civic")
    add(service, "My sister lives in Boston")
    question = [("user", "How do I reverse a linked list in Python?")]
    assert recall_block(service, MemorySettings(strategy="hybrid"), question) == ""
    assert "Honda" in recall_block(service, MemorySettings(strategy="recent"), question)
