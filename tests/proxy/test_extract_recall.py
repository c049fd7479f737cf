"""Extraction (seed 002's regex families) and recall (strategies, budget, retention)."""

from __future__ import annotations

import logging
import os
import signal
import time
from datetime import timedelta
from typing import Any

import pytest

from memoryd.inject import FENCE_OPEN, estimate_tokens
from memoryd.models import MemoryType, utcnow
from memoryd.proxy.extract import (
    MAX_EXTRACTION_CHARS,
    MAX_FACT_CHARS,
    Exchange,
    Extractor,
    FactsNotStored,
    extract_facts,
    fact_key,
    remember,
)
from memoryd.proxy.recall import SHORT_QUERY_CHARS, query_of, recall_block
from memoryd.proxy.settings import MemorySettings
from memoryd.service import MemoryService
from memoryd.store.rows import to_us


# ---------------------------------------------------------------------- extraction
def test_the_three_families_and_their_categories() -> None:
    facts = extract_facts(
        "Hi! I prefer Python over Go. We decided to use Postgres for the ledger.\n"
        "I usually deploy on Fridays. What is the weather like?"
    )
    assert [(f.family, f.category.value, f.content) for f in facts] == [
        ("preference", "preferences", "I prefer Python over Go."),
        ("decision", "events", "We decided to use Postgres for the ledger."),
        ("habit", "patterns", "I usually deploy on Fridays."),
    ]
    assert facts[0].key == "preference:i_prefer_python_over_go"


def test_facts_are_sanitised_capped_and_deduplicated() -> None:
    long = "I really like " + "very " * 200 + "long walks"
    facts = extract_facts(f"I   prefer\ttea.\nI prefer tea.\n{long}")
    assert facts[0].content == "I prefer tea."
    assert len(facts) == 2  # the repeat has the same key
    assert len(facts[1].content) == MAX_FACT_CHARS


def test_only_the_newest_64_kib_are_read_and_private_text_never() -> None:
    old = "I prefer vim. " + "x" * MAX_EXTRACTION_CHARS
    facts = extract_facts(old + "\nI prefer emacs. <private>I always hide my salary.</private>")
    assert [f.content for f in facts] == ["I prefer emacs."]


def test_a_fact_key_without_words_is_a_digest() -> None:
    assert fact_key("habit", "!!!").startswith("habit:")
    assert len(fact_key("habit", "!!!")) == len("habit:") + 16


def exchange(svc: MemoryService, *said: str) -> Exchange:
    return Exchange(svc.tenant_id, tuple(said), "session-1", "gpt-4o")


def test_remembering_twice_upserts_by_key(service: MemoryService) -> None:
    remember(service, exchange(service, "I prefer Python over Go."), "Noted.")
    remember(service, exchange(service, "I prefer Python over Go."), "Noted.")
    facts = [m for m in service.list_memories(limit=100)[0] if m.source == "proxy"]
    assert [(m.content, m.key) for m in facts] == [
        ("I prefer Python over Go.", "preference:i_prefer_python_over_go")
    ]
    turns = service.list_memories(memory_type=MemoryType.SESSION, limit=100)[0]
    assert sorted(m.content for m in turns) == [
        "assistant: Noted.",
        "user: I prefer Python over Go.",
    ]


def test_a_failing_fact_is_logged_and_the_turns_are_kept(
    service: MemoryService, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("the disk is full")

    monkeypatch.setattr(MemoryService, "add", broken)
    with (
        caplog.at_level(logging.ERROR, logger="memoryd.proxy"),
        pytest.raises(FactsNotStored, match="1 fact"),
    ):
        remember(service, exchange(service, "I always test first."), "Good habit.")
    assert "could not store the fact habit:i_always_test_first" in caplog.text
    turns = service.list_memories(memory_type=MemoryType.SESSION, limit=100)[0]
    assert sorted(m.content for m in turns) == [
        "assistant: Good habit.",
        "user: I always test first.",
    ]


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
    contents = [m.content for m in service.list_memories(limit=100)[0]]
    assert {"I prefer tea.", "I prefer coffee."} <= set(contents)
