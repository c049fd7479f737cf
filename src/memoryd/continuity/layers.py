"""Layered session memory (seed 004): D6 raw → D5 exchanges → D2 outline → D1 gist → D0 themes.

While a session runs, every message it reports is kept as it was said (D6)
and the session's exchange summary (D5, about 3,000 tokens: one line per
exchange, the newest kept) is rebuilt from them. Both expire after 7 days
by default. Consolidation condenses D5 into an outline (D2, ~500 tokens),
the outline into a gist (D1, ~200) and the gist's source into themes (D0,
~50), with the configured LLM or, offline, by extraction: the exchanges
whose words the session uses most, the first request, the outcome, the
most frequent terms. D2, D1 and D0 are kept, each also stored as a memory
of the session (its ``session_id`` and ``agent_id``, tags ``session-memory``
and ``d1`` …), so an ordinary search finds "what did we do on the billing
bug" and the hit names the session.

Consolidation is resumable: each step is its own transaction and
idempotent (a layer row per session and depth; its memory by a key of its
own, so adding it again returns the memory already there), so a process
killed anywhere is just run again and finishes without a duplicate. A
session that went on after its consolidation is condensed again; the new
layer memories supersede the old ones (with history).
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from memoryd.continuity.extract import (
    D1_TOKENS,
    D2_TOKENS,
    D5_TOKENS,
    build_exchanges,
    exchanges,
    extract_gist,
    extract_outline,
    extract_themes,
)
from memoryd.continuity.mechanical import Event, Message, ToolUse, cut
from memoryd.continuity.model import Owner
from memoryd.errors import ForbiddenError, MemorydError
from memoryd.models import new_id, utcnow
from memoryd.store.rows import to_us
from memoryd.store.scopes import agent_scope

if TYPE_CHECKING:
    from memoryd.llm import LLMClient
    from memoryd.service import MemoryService

log = logging.getLogger(__name__)

RAW, EXCHANGES, OUTLINE, GIST, THEMES = 6, 5, 2, 1, 0
NAMES = {THEMES: "themes", GIST: "gist", OUTLINE: "outline", EXCHANGES: "exchanges", RAW: "raw"}
TOKENS = {EXCHANGES: D5_TOKENS, OUTLINE: D2_TOKENS, GIST: D1_TOKENS, THEMES: 50}
KEPT = (OUTLINE, GIST, THEMES)
# the D6 rows a D5 rebuild reads: the session's start, and its newest rows (far more than
# ~3,000 tokens of exchange lines need)
HEAD_ROWS = 200
TAIL_ROWS = 1500
TAG = "session-memory"
SOURCE = "continuity"


def _key(role: str, text: str, at: datetime | None, call_id: str | None) -> str:
    """A D6 row's identity: the same message reported again is the same row."""
    if call_id:
        basis = f"tool\0{call_id}"
    elif at is not None:
        basis = f"{role}\0{at.isoformat()}\0{text}"
    else:
        return new_id()  # a host that gives no time: every report is a new message
    return hashlib.sha256(basis.encode("utf-8")).hexdigest()


def raw_rows(events: Sequence[Event]) -> list[tuple[str, str, str]]:
    """``(key, role, content)`` of the events worth keeping raw: messages and tool calls."""
    rows: list[tuple[str, str, str]] = []
    for event in events:
        if isinstance(event, Message) and event.text.strip():
            rows.append((_key(event.role, event.text, event.at, None), event.role, event.text))
        elif isinstance(event, ToolUse):
            text = f"{event.name}({json.dumps(dict(event.arguments), ensure_ascii=False)})"
            rows.append((_key("tool", text, event.at, event.id), "tool", cut(text, 1000)))
    return rows


class SessionLayers:
    """One tenant's layered session memory."""

    def __init__(self, service: MemoryService, *, llm: LLMClient | bool | None = True) -> None:
        self.service = service
        self.store = service.store
        self._llm_choice = llm
        self._llm: LLMClient | None = None
        if llm is not True and llm is not False and llm is not None:
            self._llm = llm

    @property
    def llm(self) -> LLMClient | None:
        if self._llm_choice is True and self._llm is None:
            from memoryd.llm import create_llm

            self._llm = create_llm(self.service.settings)
        return self._llm

    @property
    def _tenant(self) -> str:
        return self.service.tenant_id

    def _expiry(self, depth: int, now: datetime | None = None) -> int | None:
        days: float = getattr(self.service.settings, f"session_d{depth}_retention_days")
        return None if days <= 0 else to_us((now or utcnow()) + timedelta(days=days))

    # ------------------------------------------------------------------ as the session runs
    def record(self, owner: Owner, events: Sequence[Event]) -> int:
        """Keep the new messages raw (D6) and rebuild the exchange summary (D5); how many new."""
        added = self.store.append_raw(
            self._tenant,
            owner.agent_id,
            owner.session_id,
            owner.project,
            raw_rows(events),
            self._expiry(RAW),
        )
        if added:
            # the first exchange and the newest rows: D5 never holds more, however long
            # the session, so a save reads a bounded window, not the whole transcript
            head, tail = self.store.raw_window(
                self._tenant, owner.agent_id, owner.session_id, HEAD_ROWS, TAIL_ROWS
            )
            last = int(tail[-1]["seq"]) if tail else 0
            if not head or not tail or int(head[-1]["seq"]) + 1 >= int(tail[0]["seq"]):
                rows = {int(r["seq"]): r for r in [*head, *tail]}
                text = build_exchanges(exchanges([rows[k] for k in sorted(rows)]))
            else:  # the tail's first exchange may have begun before it: left out
                found = exchanges(head)[:1] + exchanges(tail)[1:]
                text = build_exchanges(found, gap=True)
            if text:
                self.store.put_layer(
                    self._tenant,
                    owner.agent_id,
                    owner.session_id,
                    owner.project,
                    EXCHANGES,
                    text,
                    last,
                    self._expiry(EXCHANGES),
                )
        return added

    # ------------------------------------------------------------------ consolidation
    def consolidate(self, agent_id: str, session_id: str) -> list[dict[str, Any]]:
        """D5 → D2 → D1 → D0 for one session, resuming where an earlier run stopped."""
        d5 = self.store.layer(self._tenant, agent_id, session_id, EXCHANGES)
        if d5 is None:
            return []
        done: list[dict[str, Any]] = []
        source = d5
        for depth in KEPT:
            row = self.store.layer(self._tenant, agent_id, session_id, depth)
            if row is None or row["basis"] < d5["basis"]:
                text = self._condense(depth, source, d5)
                row = self.store.put_layer(
                    self._tenant,
                    agent_id,
                    session_id,
                    d5["project"],
                    depth,
                    text,
                    d5["basis"],
                    self._expiry(depth),
                )
                row["memory_id"] = None  # this content has no memory yet
            if row["memory_id"] is None:
                memory = self._remember(row)
                self.store.set_layer_memory(self._tenant, row["id"], memory)
                row["memory_id"] = memory
            done.append(row)
            source = row if depth == OUTLINE else source
        return done

    def consolidate_pending(self, idle_s: float = 0.0) -> int:
        """Consolidate every session whose layers are missing or stale and that has been
        quiet for ``idle_s`` seconds (a running session is condensed once it rests)."""
        quiet = to_us(utcnow() - timedelta(seconds=idle_s))
        pending = self.store.stale_sessions(self._tenant, quiet)
        for agent_id, session_id in pending:
            self.consolidate(agent_id, session_id)
        return len(pending)

    def _header(self, depth: int, d5: Mapping[str, Any]) -> str:
        when = d5["created_at"].date().isoformat()
        where = f", {d5['project']}" if d5["project"] else ""
        label = {OUTLINE: "Outline of", GIST: "Gist of", THEMES: "Themes of"}[depth]
        return f"{label} session {d5['session_id']} ({d5['agent_id']}{where}, {when}):"

    def _condense(self, depth: int, source: Mapping[str, Any], d5: Mapping[str, Any]) -> str:
        header = self._header(depth, d5)
        if self.llm is not None:
            try:
                return f"{header} {self._ask(depth, str(source['content']))}"
            except MemorydError as exc:
                log.warning(
                    "session %s: LLM %s failed (%s); extracted",
                    d5["session_id"],
                    NAMES[depth],
                    exc.message,
                )
        content = str(source["content"])
        if depth == OUTLINE:
            return extract_outline(content, header)
        if depth == GIST:
            return extract_gist(content, header)
        return extract_themes(content, header)

    def _ask(self, depth: int, source: str) -> str:
        from memoryd.prompts.continuity import LAYER_SYSTEM, LayerAnswer

        assert self.llm is not None
        answer = self.llm.complete_json(
            [
                {"role": "system", "content": LAYER_SYSTEM},
                {"role": "user", "content": f"FORM: {NAMES[depth]}\nSOURCE:\n{source}"},
            ],
            LayerAnswer,
        )
        return cut(answer.text, TOKENS[depth] * 4)

    def _remember(self, row: Mapping[str, Any]) -> str:
        """The layer as a memory of its session; the same layer again is the same memory."""
        depth = int(row["depth"])
        days: float = getattr(self.service.settings, f"session_d{depth}_retention_days")
        # consolidation is the store's own work, whichever view started it
        owner = self.service.for_tenant(self.service.tenant_id)
        memory = owner.add(
            str(row["content"]),
            key=f"session/{row['agent_id']}/{row['session_id']}/d{depth}",
            tags=[TAG, f"d{depth}"],
            agent_id=row["agent_id"],
            session_id=row["session_id"],
            scope=agent_scope(row["agent_id"]),
            source=SOURCE,
            category="events",
            memory_type="insight",
            expires_at=None if days <= 0 else row["updated_at"] + timedelta(days=days),
        )
        return memory.id

    # ------------------------------------------------------------------ retention
    def retain(self, now: datetime | None = None) -> int:
        """Delete the layer rows past their retention (D6 and D5: 7 days); how many went."""
        moment = to_us(now or utcnow())
        assert moment is not None
        return self.store.expire_layers(moment)

    def layers(
        self, agent_id: str | None = None, session_id: str | None = None
    ) -> list[dict[str, Any]]:
        """The summary layers (D5, D2, D1, D0); an agent's view gets its own sessions' only."""
        viewer = self.service.viewer
        if viewer is not None:
            if agent_id is not None and agent_id != viewer.agent_id:
                raise ForbiddenError(
                    f"agent {viewer.agent_id} cannot read agent {agent_id}'s sessions"
                )
            agent_id = viewer.agent_id
        return self.store.session_layers(self._tenant, agent_id, session_id)
