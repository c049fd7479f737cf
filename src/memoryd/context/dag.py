"""The DAG invariant: the leaves under the context items cover every compacted message
exactly once, in order, with no gap and no overlap, and the rest are the messages
after them, in order.

Walking each context item down to its messages must give the conversation's
messages 0, 1, 2, … n-1 in order: a gap would be a lost message, an overlap a
message the agent sees twice. Every summary's edges must also match the span it
claims (``first_seq`` to ``last_seq``).
"""

from __future__ import annotations

import sqlite3

from memoryd.context.store import ContextStore


def check_invariant(
    store: ContextStore, conn: sqlite3.Connection, conv: int, tail: int
) -> list[str]:
    """The problems found; an empty list when the DAG is sound."""
    problems: list[str] = []
    items = store.items(conn, conv)
    summaries = store.summaries(conn, [i.ref for i in items if i.kind == "summary"])
    covered: list[int] = []
    for n, item in enumerate(items):
        if item.kind == "message":
            covered.append(item.ref)
            continue
        summary = summaries.get(item.ref)
        if summary is None:
            problems.append(f"context item {n} names a missing summary {item.ref}")
            continue
        under = store.leaf_messages(conn, summary.rowid)
        seqs = [m.seq for m in store.messages(conn, under)]
        if len(seqs) != len(under) or seqs != list(range(summary.first_seq, summary.last_seq + 1)):
            problems.append(
                f"summary {summary.id} does not cover messages "
                f"{summary.first_seq}-{summary.last_seq} exactly"
            )
        covered += under
    all_messages = store.all_messages(conn, conv)
    expected = [m.rowid for m in all_messages]
    if covered != expected:
        seen = set(covered)
        missing = [m.seq for m in all_messages if m.rowid not in seen]
        twice = len(covered) - len(seen)
        problems.append(
            f"the context covers {len(covered)} message slots for {len(expected)} messages "
            f"(missing {missing[:10]}, {twice} twice, or out of order)"
        )
    raw_tail = [i for i in items[-tail:] if i.kind == "message"] if tail else []
    newest = expected[-len(raw_tail) :] if raw_tail else []
    if [i.ref for i in raw_tail] != newest:
        problems.append("the newest context items are not the newest messages")
    return problems
