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
import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from memoryd.continuity.mechanical import Event, Message, ToolUse, cut
from memoryd.continuity.model import Owner
from memoryd.errors import MemorydError
from memoryd.inject import estimate_tokens
from memoryd.models import new_id, utcnow
from memoryd.store.rows import to_us

if TYPE_CHECKING:
    from memoryd.llm import LLMClient
    from memoryd.service import MemoryService

log = logging.getLogger(__name__)

RAW, EXCHANGES, OUTLINE, GIST, THEMES = 6, 5, 2, 1, 0
NAMES = {THEMES: "themes", GIST: "gist", OUTLINE: "outline", EXCHANGES: "exchanges", RAW: "raw"}
TOKENS = {EXCHANGES: 3000, OUTLINE: 500, GIST: 200, THEMES: 50}
KEPT = (OUTLINE, GIST, THEMES)
EXCHANGE_CHARS = 200  # one side of an exchange in D5
# the D6 rows a D5 rebuild reads: the session's start, and its newest rows (far more than
# ~3,000 tokens of exchange lines need)
HEAD_ROWS = 200
TAIL_ROWS = 1500
STEP_CHARS = 150  # one side of an exchange in the outline
MAX_THEMES = 8
TAG = "session-memory"
SOURCE = "continuity"
_WORD = re.compile(r"[^\W\d_][\w.-]*[^\W_]|[^\W\d_]{3,}", re.UNICODE)
_STOP = (
    "the and for that this with you your are was were have has had not but can could "
    "would should will shall what when where which who why how all any some into onto from "
    "than then them they their there these those our out its it's i'm i've let let's just "
    "also use used using now new get got make made done do does did been being about after "
    "before again more most very much many such only own same so too each other over under "
    "here please thanks thank yes okay sure want need like see look file files run ran"
)
STOPWORDS = frozenset(_STOP.split())


@dataclass(frozen=True)
class Exchange:
    user: str
    assistant: str
    tools: tuple[str, ...] = ()


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


def exchanges(rows: Sequence[Mapping[str, Any]]) -> list[Exchange]:
    """D6 rows as exchanges: a user message, the assistant's words and tools after it."""
    found: list[Exchange] = []
    user, said, tools = "", [], []  # type: ignore[var-annotated]
    for row in [*rows, {"role": "user", "content": ""}]:
        role, content = row["role"], str(row["content"])
        if role == "user":
            if user or said:
                found.append(Exchange(user, " ".join(said), tuple(dict.fromkeys(tools))))
            user, said, tools = content, [], []
        elif role == "assistant":
            said.append(content)
        elif role == "tool":
            tools.append(content.split("(", 1)[0])
    return found


def _line(e: Exchange, chars: int) -> str:
    flat = " ".join(e.user.split())
    answer = " ".join(e.assistant.split())
    line = f"- User: {cut(flat, chars)}" if flat else "- (no request)"
    if answer:
        line += f" → Assistant: {cut(answer, chars)}"
    if e.tools:
        line += f" [tools: {', '.join(e.tools)}]"
    return line


def build_exchanges(found: Sequence[Exchange], gap: bool = False) -> str:
    """D5: one line per exchange, the first and the newest ones kept within ~3,000 tokens.

    ``gap``: exchanges between the first and those given were not read at all.
    """
    lines = [_line(e, EXCHANGE_CHARS) for e in found]
    if not lines:
        return ""
    kept: list[str] = []
    budget = TOKENS[EXCHANGES] - estimate_tokens(lines[0]) - 10
    for line in reversed(lines[1:]):
        cost = estimate_tokens(line) + 1
        if cost > budget:
            break
        kept.insert(0, line)
        budget -= cost
    skipped = len(lines) - 1 - len(kept)
    if gap:
        note = ["- … earlier exchanges left out"]
    else:
        note = [f"- … {skipped} earlier exchange(s) left out"] if skipped else []
    return "\n".join([lines[0], *note, *kept])


def keywords(text: str) -> Counter[str]:
    return Counter(
        w.casefold() for w in _WORD.findall(text) if w.casefold() not in STOPWORDS and len(w) > 2
    )


def _parse(d5: str) -> list[tuple[str, str]]:
    """D5 lines back as (request, answer) pairs."""
    pairs = []
    for line in d5.splitlines():
        if not line.startswith("- User: "):
            continue
        body = line[len("- User: ") :]
        user, _, answer = body.partition(" → Assistant: ")
        pairs.append((user, answer.split(" [tools: ", 1)[0]))
    return pairs


def extract_outline(d5: str, header: str) -> str:
    """D2 offline: the goal, the exchanges richest in the session's own words, the outcome."""
    pairs = _parse(d5)
    if not pairs:
        return f"{header}\n{cut(' '.join(d5.split()), 1500)}"
    freq = keywords(d5)
    goal, outcome = pairs[0][0], pairs[-1][1] or pairs[-1][0]
    head = [header, f"Goal: {cut(goal, 300)}", "Steps:"]
    tail = [f"Outcome: {cut(outcome, 300)}"]
    budget = TOKENS[OUTLINE] - estimate_tokens("\n".join(head + tail))

    def score(pair: tuple[str, str]) -> float:
        words = keywords(" ".join(pair))
        return sum(freq[w] for w in words) / math.sqrt(1 + sum(words.values()))

    # greedy: the richest exchange, then the richest in words not covered yet
    chosen: set[int] = set()
    left = set(range(1, len(pairs)))
    while left:
        best = min(left, key=lambda j: (-score(pairs[j]), j))
        left.discard(best)
        user, answer = pairs[best]
        step = f"- {cut(user, STEP_CHARS)}" + (f" → {cut(answer, STEP_CHARS)}" if answer else "")
        cost = estimate_tokens(step) + 1
        if cost > budget:
            continue
        chosen.add(best)
        budget -= cost
        for word in keywords(" ".join(pairs[best])):
            freq[word] = 0  # covered
    steps = []
    for i in sorted(chosen):
        user, answer = pairs[i]
        steps.append(
            f"- {cut(user, STEP_CHARS)}" + (f" → {cut(answer, STEP_CHARS)}" if answer else "")
        )
    return "\n".join(head + steps + tail)


def extract_gist(d2: str, header: str) -> str:
    """D1 offline: what the session set out to do, and how it ended, in one line."""
    fields = dict(
        line.split(": ", 1) for line in d2.splitlines() if line.startswith(("Goal: ", "Outcome: "))
    )
    goal = fields.get("Goal", "")
    outcome = fields.get("Outcome", "")
    text = f"{header} {cut(goal, 400)}" + (f" Outcome: {cut(outcome, 300)}" if outcome else "")
    return cut(text, TOKENS[GIST] * 4)


def extract_themes(d2: str, header: str) -> str:
    """D0 offline: the terms the session used most."""
    body = "\n".join(line for line in d2.splitlines()[1:])
    terms = [w for w, _ in keywords(body).most_common(MAX_THEMES)]
    return f"{header} {', '.join(terms)}"


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
        memory = self.service.add(
            str(row["content"]),
            key=f"session/{row['agent_id']}/{row['session_id']}/d{depth}",
            tags=[TAG, f"d{depth}"],
            agent_id=row["agent_id"],
            session_id=row["session_id"],
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
        return self.store.session_layers(self._tenant, agent_id, session_id)
