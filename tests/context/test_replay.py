"""A LoCoMo conversation replayed turn by turn at a 4,000-token budget (English and Chinese)."""

from __future__ import annotations

from context_helpers import locomo_turns

from memoryd.context import ContextEngine
from memoryd.context.assemble import counted
from memoryd.inject import estimate_tokens

BUDGET = 4000


def replay(engine: ContextEngine, conversation: str, turns: list[dict[str, object]]) -> int:
    compactions = 0
    for n, turn in enumerate(turns):
        engine.ingest(conversation, turn)
        report = engine.after_turn(conversation, BUDGET)
        assert report.error is None
        compactions += report.compacted
        assert engine.check(conversation) == [], f"after turn {n}"
        if n % 25 == 0 or n == len(turns) - 1:
            assembled = engine.assemble(conversation, BUDGET)
            assert assembled.estimated_tokens <= BUDGET
            assert counted(assembled) <= BUDGET
            assert sum(estimate_tokens(str(m["content"])) for m in assembled.messages) <= BUDGET
            tail = [m for m in assembled.messages if m["role"] != "system"][-4:]
            expected = turns[max(0, n - 3) : n + 1]
            assert [m["content"] for m in tail] == [t["content"] for t in expected]
    return compactions


def test_locomo_replay_stays_in_budget_and_loses_nothing(quiet_engine: ContextEngine) -> None:
    turns = locomo_turns()
    compactions = replay(quiet_engine, "locomo-0", turns)
    assert compactions > 5
    first = str(turns[2]["content"])  # LoCoMo: "I went to a LGBTQ support group yesterday …"
    phrase = " ".join(first.split()[3:7])  # four words from inside the turn
    hits = quiet_engine.grep("locomo-0", phrase)
    assert hits and hits[0].exact and hits[0].id == turns[2]["id"]
    info = quiet_engine.conversation("locomo-0")
    assert info["context_items"][0]["kind"] == "summary"  # the first turns are compacted
    summary_id = info["context_items"][0]["id"]
    expanded = quiet_engine.expand("locomo-0", summary_id=summary_id)
    assert first in [m["content"] for m in expanded["messages"]]
    by_query = quiet_engine.expand("locomo-0", query=phrase)
    assert first in [m["content"] for m in by_query["messages"]]


CHINESE = [
    "我们下周三在杭州西湖边的茶馆见面，讨论新项目的预算和时间表。",
    "好的，预算大概是三十五万元，我会把详细的表格发给你。",
    "张伟说他五月八日之前可以完成第一版设计稿，李娜负责测试。",
    "我更喜欢用深色主题，请把界面改成深色的，字体也大一点。",
]


def test_chinese_replay_stays_in_budget(quiet_engine: ContextEngine) -> None:
    turns = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"第{i}条：{CHINESE[i % 4]}"}
        for i in range(160)
    ]
    compactions = replay(quiet_engine, "zh", turns)
    assert compactions > 3
    hits = quiet_engine.grep("zh", "西湖边的茶馆")
    assert hits and hits[0].exact and hits[0].seq == 0
    assert "第0条" in quiet_engine.expand("zh", query="第0条：我们下周三")["messages"][0]["content"]
