"""Compaction: messages into leaf summaries, runs of summaries into condensed ones.

A compaction is planned from one snapshot of the context items, summarised
outside any transaction (an LLM call may take seconds; the database is not
held meanwhile), and applied in one write transaction that first checks the
items it planned from are still there. A kill at any point leaves either the
DAG as it was or the whole compaction; the next turn plans again from what
is there. The ``freshTailCount`` newest messages are never compacted.

Each step, oldest first: a run of ``leafMinFanout`` or more summaries of one
depth becomes a condensed summary; otherwise the oldest stretch of messages
(at most ``leafChunkTokens`` of source) becomes a leaf. ``after_turn`` steps
while the context is over ``contextThreshold`` of the budget; ``compact()``
steps until nothing is left to compact.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from memoryd.context.config import LEAF_RATIO, ContextConfig
from memoryd.context.models import Item, Summary
from memoryd.context.render import summary_tokens
from memoryd.context.store import ContextStore, NewSummary
from memoryd.context.summarise import Source, Summariser, SummaryError
from memoryd.inject import estimate_tokens

log = logging.getLogger(__name__)
MIN_TARGET_TOKENS = 48
# a leaf over less source than this would cost about as much as what it replaces
MIN_LEAF_SOURCE_TOKENS = 200


@dataclass
class Node:
    """An item while a compaction is planned; a planned summary has a negative ref."""

    kind: str
    ref: int
    tokens: int
    depth: int  # -1 for a message
    first_seq: int
    last_seq: int
    text: str
    role: str | None = None
    at: datetime | None = None


@dataclass
class Report:
    """What one compaction did: summaries made, tokens before and after, or why none."""

    compacted: bool = False
    summaries: list[dict[str, Any]] = field(default_factory=list)
    tokens_before: int = 0
    tokens_after: int = 0
    error: str | None = None
    seconds: float = 0.0
    made: list[NewSummary] = field(default_factory=list)
    memory_tasks: list[str] = field(default_factory=list)  # smart ingest of the summaries

    def to_json(self) -> dict[str, Any]:
        return {
            "compacted": self.compacted,
            "summaries": self.summaries,
            "tokens_before": self.tokens_before,
            "tokens_after": self.tokens_after,
            "error": self.error,
            "memory_tasks": self.memory_tasks,
        }


class Compactor:
    def __init__(self, store: ContextStore, config: ContextConfig, summariser: Summariser) -> None:
        self.store = store
        self.config = config
        self.summariser = summariser

    def nodes(self, conv: int) -> tuple[list[Item], list[Node]]:
        """The context items of ``conv`` and their nodes, from one snapshot."""
        with self.store.db.read() as conn:
            items = self.store.items(conn, conv)
            messages = {
                m.rowid: m
                for m in self.store.messages(conn, [i.ref for i in items if i.kind == "message"])
            }
            summaries = self.store.summaries(conn, [i.ref for i in items if i.kind == "summary"])
        nodes = []
        for item in items:
            if item.kind == "message":
                m = messages[item.ref]
                nodes.append(
                    Node(
                        "message",
                        m.rowid,
                        m.tokens,
                        -1,
                        m.seq,
                        m.seq,
                        m.content,
                        m.role,
                        m.created_at,
                    )
                )
            else:
                s = summaries[item.ref]
                nodes.append(_summary_node(s))
        return items, nodes

    def run(self, conv: int, limit_tokens: int | None) -> Report:
        """Compact while the context is over ``limit_tokens`` (None: as far as it goes)."""
        started = time.perf_counter()
        items, nodes = self.nodes(conv)
        report = Report(tokens_before=sum(n.tokens for n in nodes))
        planned: list[NewSummary] = []
        try:
            while limit_tokens is None or sum(n.tokens for n in nodes) > limit_tokens:
                if not self._step(nodes, planned):
                    break
        except SummaryError as exc:
            log.warning("compaction left for later: %s", exc)
            report.error = exc.message
            planned.clear()  # nothing half-done: the messages stay as they were
        if planned:
            with self.store.db.write() as conn:
                final = [
                    Item("message" if n.kind == "message" else "summary", n.ref) for n in nodes
                ]
                done = self.store.replace_items(conn, conv, items, planned, final)
            if done:
                report.compacted = True
                report.summaries = [
                    {"id": s.id, "kind": s.kind, "first_seq": s.first_seq, "last_seq": s.last_seq}
                    for s in planned
                ]
            else:
                report.error = "another compaction changed the context first"
        _, after = self.nodes(conv)
        report.tokens_after = sum(n.tokens for n in after)
        report.seconds = time.perf_counter() - started
        report.made = planned
        return report

    def _tail_start(self, nodes: Sequence[Node]) -> int:
        """Index of the first node of the fresh tail (the newest messages, kept verbatim):
        with fewer messages than the tail holds, the first message starts it."""
        positions = [i for i, n in enumerate(nodes) if n.kind == "message"]
        if not positions:
            return len(nodes)
        return positions[max(0, len(positions) - self.config.fresh_tail_count)]

    def _step(self, nodes: list[Node], planned: list[NewSummary]) -> bool:
        """One leaf or condensed summary; False when nothing is left to compact."""
        tail = self._tail_start(nodes)
        run = self._condensable(nodes[:tail])
        if run is not None:
            start, end = run
            children = nodes[start:end]
            self._summarise(nodes, planned, start, end, "condensed", children[0].depth + 1)
            return True
        first = next((i for i in range(tail) if nodes[i].kind == "message"), None)
        if first is None:
            return False
        start = end = first
        source = 0
        while end < tail and nodes[end].kind == "message":
            if end > start and source + nodes[end].tokens > self.config.leaf_chunk_tokens:
                break
            source += nodes[end].tokens
            end += 1
        if source < MIN_LEAF_SOURCE_TOKENS:
            return False
        self._summarise(nodes, planned, start, end, "leaf", 0)
        return True

    def _condensable(self, nodes: Sequence[Node]) -> tuple[int, int] | None:
        """The oldest run of ``leafMinFanout`` or more summaries of one depth."""
        i = 0
        while i < len(nodes):
            if nodes[i].kind != "summary":
                i += 1
                continue
            j = i
            while (
                j < len(nodes) and nodes[j].kind == "summary" and nodes[j].depth == nodes[i].depth
            ):
                j += 1
            if j - i >= self.config.leaf_min_fanout:
                return i, j
            i = j
        return None

    def _summarise(
        self,
        nodes: list[Node],
        planned: list[NewSummary],
        start: int,
        end: int,
        kind: str,
        depth: int,
    ) -> None:
        children = nodes[start:end]
        source_tokens = sum(c.tokens for c in children)
        target = (
            self.config.leaf_target_tokens
            if kind == "leaf"
            else self.config.condensed_target_tokens
        )
        target = max(MIN_TARGET_TOKENS, min(target, int(source_tokens * LEAF_RATIO)))
        sources = [Source(c.text, c.role, c.at) for c in children]
        summarised = self.summariser.summarise(kind, sources, target)
        text = summarised.text
        summary = NewSummary(
            id="sum_" + uuid.uuid4().hex[:20],
            kind=kind,
            depth=depth,
            content=text,
            tokens=estimate_tokens(text),
            source_tokens=source_tokens,
            first_seq=children[0].first_seq,
            last_seq=children[-1].last_seq,
            summariser=self.summariser.name,
            children=tuple((c.kind, c.ref) for c in children),
            triples=summarised.triples,
        )
        planned.append(summary)
        ref = -len(planned)
        node = Node(
            "summary",
            ref,
            summary_tokens(summary.id, kind, summary.first_seq, summary.last_seq, text),
            depth,
            summary.first_seq,
            summary.last_seq,
            text,
        )
        nodes[start:end] = [node]


def _summary_node(s: Summary) -> Node:
    return Node(
        "summary",
        s.rowid,
        summary_tokens(s.id, s.kind, s.first_seq, s.last_seq, s.content),
        s.depth,
        s.first_seq,
        s.last_seq,
        s.content,
    )
