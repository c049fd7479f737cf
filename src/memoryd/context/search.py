"""``lcm_grep``: one conversation's messages and summaries, searched exactly and by FTS5.

Exact matches (the query verbatim, case-insensitive) come first, in conversation
order; then full-text matches from both indexes (words with BM25, trigrams for
Chinese and Japanese), best first. Each hit has its id (for ``lcm_expand_query``)
and a snippet around the match.
"""

from __future__ import annotations

import sqlite3

from memoryd.context.models import GrepHit
from memoryd.context.store import ContextStore
from memoryd.store.fts import build_query

SNIPPET_CHARS = 240
TABLES = (
    ("context_messages", "context_messages_fts", "context_messages_tri"),
    ("summaries", "summaries_fts", "summaries_tri"),
)


def exact_rows(conn: sqlite3.Connection, table: str, conv: int, text: str, limit: int) -> list[int]:
    """Rowids whose content holds ``text`` verbatim (case-insensitive for ASCII)."""
    column = "seq" if table == "context_messages" else "first_seq"
    return [
        int(r[0])
        for r in conn.execute(
            f"SELECT rowid FROM {table} WHERE conv = ? AND instr(lower(content), lower(?)) > 0 "
            f"ORDER BY {column} LIMIT ?",
            (conv, text, limit),
        )
    ]


def fts_rows(
    conn: sqlite3.Connection, table: str, conv: int, match: str, index: str, limit: int
) -> list[tuple[int, float]]:
    """(rowid, relevance) of one full-text index, restricted to the conversation."""
    rows = conn.execute(
        f"SELECT f.rowid, -bm25({index}) FROM {index} f JOIN {table} t ON t.rowid = f.rowid "
        f"WHERE {index} MATCH ? AND t.conv = ? ORDER BY bm25({index}) LIMIT ?",
        (match, conv, limit),
    ).fetchall()
    return [(int(r[0]), float(r[1])) for r in rows]


def snippet(text: str, query: str) -> str:
    """The part of ``text`` around the query (or its first term), on one line."""
    flat = " ".join(text.split())
    at = flat.casefold().find(query.casefold())
    if at < 0:
        for term in build_query(query).terms:
            at = flat.casefold().find(term)
            if at >= 0:
                break
    at = max(0, at)
    start = max(0, at - SNIPPET_CHARS // 3)
    cut = flat[start : start + SNIPPET_CHARS]
    return ("…" if start else "") + cut + ("…" if start + SNIPPET_CHARS < len(flat) else "")


def grep(store: ContextStore, conv: int, query: str, limit: int) -> list[GrepHit]:
    ranked: dict[tuple[str, int], float] = {}
    exact: set[tuple[str, int]] = set()
    fts = build_query(query)
    with store.db.read() as conn:
        for table, words, trigrams in TABLES:
            for rowid in exact_rows(conn, table, conv, query.strip(), limit):
                key = (table, rowid)
                exact.add(key)
                ranked[key] = float("inf")
            for index, match in ((words, fts.words), (trigrams, fts.trigrams)):
                if not match:
                    continue
                try:
                    rows = fts_rows(conn, table, conv, match, index, limit)
                except sqlite3.OperationalError as exc:
                    raise store.db.storage_error(exc, "full-text search failed") from exc
                for rowid, score in rows:
                    ranked[(table, rowid)] = max(ranked.get((table, rowid), 0.0), score)
            for short in fts.substrings:  # a CJK word under three characters: no trigram holds it
                floor = min(ranked.values(), default=1.0) * 0.5
                for rowid in exact_rows(conn, table, conv, short, limit):
                    ranked.setdefault((table, rowid), floor)
        best = sorted(ranked.items(), key=lambda kv: -kv[1])[:limit]
        messages = store.messages(conn, [r for (t, r), _ in best if t == "context_messages"])
        by_rowid = {m.rowid: m for m in messages}
        summaries = store.summaries(conn, [r for (t, r), _ in best if t == "summaries"])
    hits = []
    for (table, rowid), _ in best:
        if table == "context_messages":
            m = by_rowid[rowid]
            hits.append(
                GrepHit(
                    "message",
                    m.message_id or f"m{m.seq}",
                    m.seq,
                    m.role,
                    snippet(m.content, query),
                    (table, rowid) in exact,
                )
            )
        else:
            s = summaries[rowid]
            hits.append(
                GrepHit(
                    "summary",
                    s.id,
                    s.first_seq,
                    None,
                    snippet(s.content, query),
                    (table, rowid) in exact,
                )
            )
    exact_hits = sorted((h for h in hits if h.exact), key=lambda h: (h.kind != "message", h.seq))
    return exact_hits + [h for h in hits if not h.exact]
