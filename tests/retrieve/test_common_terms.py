"""The keyword leg's common-terms plan: common words never make it rank every row.

A word held by more than ``COMMON_TERM_ROWS`` rows is common. Candidates then
come from the rare words, or from rows holding the common words together;
a query of one common word ranks only the newest rows that hold it. Below
the threshold a query is the plain OR it always was. The threshold is
lowered here so that a handful of rows shows each case.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from memoryd.embed.local import LocalEmbedder
from memoryd.service import MemoryService
from memoryd.store import search
from memoryd.store.filters import MemoryFilter
from memoryd.store.postgres import search as pg_search

COMMON = 4


@pytest.fixture
def rows(service: MemoryService, monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Content → rowid of a store where "budget" and "meeting" are common and "kiwi" rare."""
    monkeypatch.setattr(search, "COMMON_TERM_ROWS", COMMON)
    texts = [f"budget review number {i}" for i in range(5)]
    texts += [f"meeting room booking {i}" for i in range(5)]
    texts += ["budget meeting moved to friday", "budget meeting notes", "kiwi supplier budget"]
    texts += ["budget budget budget"]  # short and repetitive: the plain OR ranks it high
    texts += [f"weather report {i}" for i in range(12)]  # the two words are not in most rows
    for text in texts:
        service.add(text)
    conn = service.engine.sqlite_store.conn
    return {c: r for r, c in conn.execute("SELECT rowid, content FROM memories")}


def keyword(
    service: MemoryService, query: str, k: int, ranked: list[str] | None = None
) -> list[int]:
    """The keyword leg's rowids; ``ranked`` collects the MATCH texts it ranked by."""
    store = service.engine.sqlite_store

    def trace(sql: str) -> None:
        if ranked is not None and "ORDER BY rank" in sql:
            ranked.append(sql.split("MATCH '")[1].split("' ")[0])

    store.conn.set_trace_callback(trace)
    try:
        hits = store.bm25_search(service.tenant_id, service.space_id, query, k, MemoryFilter())
    finally:
        store.conn.set_trace_callback(None)
    return [r for r, _ in hits]


def test_common_words_find_the_rows_that_hold_them_together(
    service: MemoryService, rows: dict[str, int]
) -> None:
    ranked: list[str] = []
    found = keyword(service, "budget meeting", 2, ranked)
    assert set(found) == {rows["budget meeting moved to friday"], rows["budget meeting notes"]}
    assert ranked == ['"budget" AND "meeting"']  # the plain OR was never ranked


def test_a_rare_word_finds_candidates_before_common_ones(
    service: MemoryService, rows: dict[str, int]
) -> None:
    ranked: list[str] = []
    found = keyword(service, "kiwi budget meeting", 3, ranked)
    assert ranked == ['"kiwi" OR ("budget" AND "meeting")']
    assert found[0] == rows["kiwi supplier budget"]
    assert set(found) == {
        rows["kiwi supplier budget"],
        rows["budget meeting moved to friday"],
        rows["budget meeting notes"],
    }


def test_one_common_word_ranks_only_the_newest_rows_holding_it(
    service: MemoryService, rows: dict[str, int]
) -> None:
    holding = sorted(r for c, r in rows.items() if "budget" in c)
    assert set(keyword(service, "budget", 20)) == set(holding[-COMMON:])


def test_too_few_rows_together_falls_back_to_the_plain_or(
    service: MemoryService, rows: dict[str, int]
) -> None:
    # two rows hold both words, three are asked for: the plain OR answers, bounded
    found = keyword(service, "budget meeting", 3)
    assert len(found) == 3
    assert {rows["budget meeting moved to friday"], rows["budget meeting notes"]} <= set(found)


def test_below_the_threshold_a_query_is_the_plain_or(
    service: MemoryService, rows: dict[str, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(search, "COMMON_TERM_ROWS", 1_000)
    conn = service.engine.sqlite_store.conn
    plain = [
        r
        for (r,) in conn.execute(
            'SELECT rowid FROM memories_fts WHERE memories_fts MATCH \'"budget" OR "meeting"\' '
            "ORDER BY rank LIMIT 20"
        )
    ]
    assert keyword(service, "budget meeting", 20) == plain
    assert len(plain) == 14  # the rows holding one of the two words


def test_postgres_ranks_a_broad_match_within_its_newest_rows(
    tmp_path: Path,
    embedder: LocalEmbedder,
    postgres_url: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(pg_search, "COMMON_TERM_ROWS", COMMON)
    monkeypatch.setenv("MEMORYD_DATABASE_URL", postgres_url)
    svc = MemoryService(tmp_path, embedder=embedder)
    try:
        added = [svc.add(f"budget line {i}") for i in range(8)]
        found = svc.store.bm25_search(svc.tenant_id, svc.space_id, "budget", 20, MemoryFilter())
        newest = {m.id for m in added[-COMMON:]}
        assert {m.id for m in svc.store.by_rowids([r for r, _ in found]).values()} == newest
    finally:
        svc.close()
