"""Two-character Chinese and Japanese words match through the CJK bigram index.

The trigram index holds no word shorter than three characters, and most
Chinese words have two: 猫叫什么 ("what is the cat called") must find
我的猫叫小白 by 猫叫, which it shares with no trigram.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from memoryd.embed.local import LocalEmbedder
from memoryd.service import MemoryService
from memoryd.store.fts import build_query, cjk_bigrams
from memoryd.store.sqlite import SQLiteStore

NOTES = ["我的猫叫小白", "我喜欢喝绿茶", "明天要去北京开会", "I like coffee"]


def test_bigrams_of_each_run_and_lone_characters_whole() -> None:
    assert cjk_bigrams("我的猫叫小白") == "我的 的猫 猫叫 叫小 小白"
    assert cjk_bigrams("I love 猫 and 绿茶!") == "猫 绿茶"
    assert cjk_bigrams("no cjk here") == ""
    assert cjk_bigrams(None) == ""


def test_query_gets_bigrams_beside_trigrams() -> None:
    q = build_query("猫叫什么")
    assert q.trigrams == '"猫叫什" OR "叫什么"'
    assert q.bigrams == '"猫叫" OR "叫什" OR "什么"'
    assert build_query("咖啡").bigrams == '"咖啡"'
    assert build_query("favourite editor").bigrams is None


def top(service: MemoryService, query: str) -> str:
    return service.search(query, limit=3).results[0].memory.content


@pytest.mark.parametrize(
    ("query", "expected"),
    [("猫叫什么", "我的猫叫小白"), ("喝什么茶", "我喜欢喝绿茶"), ("开会", "明天要去北京开会")],
)
def test_short_chinese_questions_find_their_memory(
    service: MemoryService, query: str, expected: str
) -> None:
    for note in NOTES:
        service.add(note)
    assert top(service, query) == expected


def test_an_edit_reindexes_and_a_deleted_memory_is_not_found(service: MemoryService) -> None:
    cat = service.add("我的猫叫小白")
    service.add("我喜欢喝绿茶")
    service.update(cat.id, content="我的狗叫大黄")
    assert top(service, "狗叫什么") == "我的狗叫大黄"
    conn = service.engine.store.conn
    assert {g for (g,) in conn.execute("SELECT grams FROM memories_bi")} == {
        "我的 的狗 狗叫 叫大 大黄",
        "我喜 喜欢 欢喝 喝绿 绿茶",
    }
    service.delete(cat.id)
    assert all(r.memory.id != cat.id for r in service.search("狗叫什么", limit=3).results)


def test_an_existing_database_is_indexed_by_the_migration(
    home: Path, embedder: LocalEmbedder
) -> None:
    old = MemoryService(home, embedder=embedder)
    for note in NOTES:
        old.add(note)
    old.close()
    with sqlite3.connect(home / "memoryd.db") as conn:  # as a release before the index left it
        for trigger in ("memories_bi_ai", "memories_bi_ad", "memories_bi_au"):
            conn.execute(f"DROP TRIGGER {trigger}")
        conn.execute("DROP TABLE memories_bi")
        conn.execute("DELETE FROM schema_migrations WHERE name LIKE '0012_%'")
    new = MemoryService(home, embedder=embedder)
    try:
        assert top(new, "猫叫什么") == "我的猫叫小白"
        store = new.engine.store
        assert isinstance(store, SQLiteStore)
        count = store.conn.execute("SELECT COUNT(*) FROM memories_bi").fetchone()[0]
        assert count == 3  # the English note has no CJK text and no entry
        assert store.integrity(full=True) == []
    finally:
        new.close()
