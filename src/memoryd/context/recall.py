"""4-layer recall (seed 003 "Retrieval Pipeline"): each layer its own fenced section and budget.

* L0 identity: the configured identity text and files, verbatim.
* L1 essential: pinned memories and those of importance 0.8 or more (800 tokens, 400
  optimised).
* L2 on-demand: more memories of the topic the query is about (500 tokens; dropped
  optimised). memoryd's topic is the memory category: the category most of the
  query's best distilled hits share (a question about a trip is about events, one
  about a favourite band about preferences).
* L3 deep: memoryd's hybrid search, top 10 (3 optimised), then the knowledge-graph
  merge: a triple whose subject or object the query names is added unless a recalled
  memory already says both ends of it. The conversation's own compacted messages that
  match the query best (``lcm_grep``, 10, 3 optimised) join them verbatim: the engine
  expands on the agent's behalf what it would otherwise have to ask for.

L3 is given the budget first (it answers the question at hand), then L1, then L2;
they are shown in layer order.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from memoryd.context.config import ESSENTIAL_IMPORTANCE, ContextConfig
from memoryd.context.models import StoredMessage
from memoryd.context.render import section
from memoryd.context.summarise import date_line, entities
from memoryd.context.triples import TripleStore
from memoryd.errors import MemorydError
from memoryd.inject import estimate_tokens
from memoryd.models import Category, Memory, MemoryType, State, utcnow
from memoryd.service import MemoryService
from memoryd.store import MemoryFilter

log = logging.getLogger(__name__)
KG_CANDIDATES = 20
KG_ADDED = 3
LIST_CANDIDATES = 50


@dataclass
class Recalled:
    """The rendered sections, in layer order, and what each one holds."""

    sections: list[str] = field(default_factory=list)
    layers: dict[str, list[str]] = field(default_factory=dict)  # layer → memory ids / triples

    @property
    def text(self) -> str:
        return "\n".join(self.sections)

    @property
    def tokens(self) -> int:
        return estimate_tokens(self.text) if self.sections else 0


class Recall:
    def __init__(self, svc: MemoryService, config: ContextConfig, triples: TripleStore) -> None:
        self.svc = svc
        self.config = config
        self.triples = triples

    def identity(self) -> list[str]:
        lines = [line for line in self.config.identity.splitlines() if line.strip()]
        for name in self.config.identity_files:
            path = Path(name).expanduser()
            files = sorted(p for p in path.iterdir() if p.is_file()) if path.is_dir() else [path]
            for file in files:
                try:
                    lines += [
                        ln for ln in file.read_text(encoding="utf-8").splitlines() if ln.strip()
                    ]
                except (OSError, UnicodeDecodeError) as exc:
                    log.warning("identity file %s not read: %s", file, exc)
        return lines

    def recall(
        self,
        query: str,
        budget: int,
        shown: Sequence[str] = (),
        compacted: Callable[[str, int], list[StoredMessage]] | None = None,
    ) -> Recalled:
        """The sections for ``query`` within ``budget`` tokens; ``shown`` is text already
        in the context verbatim (the fresh tail), which recall does not repeat;
        ``compacted`` finds the conversation's own compacted messages for a query."""
        out = Recalled()
        left = budget
        sections: dict[str, str] = {}
        identity = self.identity()
        if identity:
            sections["L0"] = section("memoryd-identity", "Identity", identity, left, verbatim=True)
            left -= estimate_tokens(sections["L0"]) + 1
        hits: list[Memory] = []
        if query.strip() and left > 0:
            try:
                response = self.svc.search(query, limit=self.config.l3_hits, touch=False)
                hits = [r.memory for r in response.results]
            except MemorydError as exc:  # recall is an addition: a failed search costs it only
                log.warning("L3 recall failed: %s", exc)
                out.layers["error"] = [exc.message]
        hits = [m for m in hits if not any(t and t in m.content for t in shown)]
        lines = [self._line(m.content, m.said_at) for m in hits]
        if compacted is not None and self.config.l3_conversation_hits and query.strip():
            said = [m.content for m in hits] + list(shown)
            for message in compacted(query, self.config.l3_conversation_hits):
                if any(message.content in text for text in said):
                    continue
                lines.append(self._line(f"{message.role}: {message.content}", message.created_at))
                out.layers.setdefault("L3_conversation", []).append(
                    message.message_id or f"m{message.seq}"
                )
        kg = self._graph(query, hits)
        lines += [f"(knowledge graph) {t}" for t in kg]
        sections["L3"] = section("memoryd-recall", "Recalled memories", lines, max(0, left))
        left -= estimate_tokens(sections["L3"]) + 1 if sections["L3"] else 0
        out.layers["L3"] = [m.id for m in hits] + kg
        seen = {m.id for m in hits}
        essential = [m for m in self._listed(None) if m.id not in seen]
        sections["L1"] = section(
            "memoryd-essential",
            "Essential",
            [m.content for m in essential],
            max(0, min(self.config.l1_tokens, left)),
        )
        left -= estimate_tokens(sections["L1"]) + 1 if sections["L1"] else 0
        out.layers["L1"] = [m.id for m in essential]
        seen |= {m.id for m in essential}
        if self.config.l2_tokens is not None:
            topic = self._topic(hits)
            if topic is not None:
                more = [m for m in self._listed(topic) if m.id not in seen]
                sections["L2"] = section(
                    "memoryd-topic",
                    f"More about {topic}",
                    [m.content for m in more],
                    max(0, min(self.config.l2_tokens, left)),
                )
                out.layers["L2"] = [m.id for m in more]
        out.sections = [sections[k] for k in ("L0", "L1", "L2", "L3") if sections.get(k)]
        return out

    def _line(self, text: str, when: datetime | None) -> str:
        if self.config.date_headers and when is not None:
            return f"{date_line(when)} {text}"
        return text

    def _graph(self, query: str, hits: Sequence[Memory]) -> list[str]:
        names = [e for e in entities(query) if not e[:1].isdigit()]
        if not names:
            return []
        said = " ".join(m.content for m in hits).casefold()
        added = []
        for triple in self.triples.about(self.svc.tenant_id, names, KG_CANDIDATES):
            if triple.subject.casefold() in said and triple.object.casefold() in said:
                continue
            added.append(triple.line)
            if len(added) >= KG_ADDED:
                break
        return added

    def _listed(self, category: str | None) -> list[Memory]:
        """Distilled memories, most important first: essential ones, or one category's."""
        f = self.svc.scoped(
            MemoryFilter(
                state=[State.ACTIVE],
                live_at=utcnow(),  # what holds now: nothing superseded, ended or expired
                exclude_types=(MemoryType.SESSION,),
                category=None if category is None else [Category(category)],
            )
        )
        memories, _ = self.svc.store.list_memories(
            self.svc.tenant_id,
            self.svc.spaces.readable_spaces(),
            f,
            sort="importance",
            order="desc",
            limit=LIST_CANDIDATES,
            offset=0,
        )
        if category is not None:
            return memories
        return [
            m
            for m in memories
            if m.memory_type is MemoryType.PINNED or m.importance >= ESSENTIAL_IMPORTANCE
        ]

    @staticmethod
    def _topic(hits: Sequence[Memory]) -> str | None:
        counts = Counter(m.category.value for m in hits if m.memory_type is not MemoryType.SESSION)
        return counts.most_common(1)[0][0] if counts else None
