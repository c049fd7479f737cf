"""ContextEngine: one long conversation kept within a token budget, nothing ever lost.

The host calls ``ingest`` (or ``ingest_batch``) for each message, ``assemble``
before each model call and ``after_turn`` after it; the engine compacts when the
context passes ``contextThreshold`` of the budget and keeps the fresh tail
verbatim. ``lcm_grep`` and ``lcm_expand_query`` (``grep`` / ``expand`` here) reach
back into what was compacted. Messages become long-term memories as they arrive
(raw capture), and every summary goes through smart ingest, so a fact decided in
a compacted part of today's session is recalled next week.

The same engine serves every door: the SDK (``memoryd.ContextEngine``), REST
(``/v1/context/...``), MCP and the CLI.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from memoryd.context.assemble import Assembled, assemble, check_budget
from memoryd.context.bootstrap import read_transcript
from memoryd.context.compaction import Compactor, Report
from memoryd.context.config import MAX_BATCH_MESSAGES, ContextConfig
from memoryd.context.dag import check_invariant
from memoryd.context.expand import whole
from memoryd.context.messages import pointer_ids, prepare_all
from memoryd.context.models import GrepHit, IngestOutcome, StoredMessage, Summary
from memoryd.context.recall import Recall
from memoryd.context.remember import summary_turns
from memoryd.context.search import grep
from memoryd.context.store import ContextStore, NewMessage
from memoryd.context.summarise import ExtractiveSummariser, LLMSummariser, Summariser
from memoryd.context.triples import Triple, TripleStore, extract
from memoryd.errors import NotFoundError, ValidationError
from memoryd.service import MemoryService
from memoryd.store.rows import from_us

log = logging.getLogger(__name__)
MAX_ID_CHARS = 200
MAX_GREP_LIMIT = 100
MAX_EXPAND_MESSAGES = 2000
SUMMARY_SESSION = "{conversation}#summaries"
SUMMARY_SOURCE = "context-summary"


def config_from(svc: MemoryService) -> ContextConfig:
    """The configured engine: optimisation mode and identity from the settings."""
    s = svc.settings
    base = ContextConfig.optimized() if s.context_optimization else ContextConfig()
    return replace(
        base, identity=s.context_identity, identity_files=tuple(s.context_identity_files)
    )


def default_summariser(svc: MemoryService, config: ContextConfig) -> Summariser:
    """The configured LLM when there is one, else the offline extractive summariser."""
    from memoryd.llm import create_llm

    llm = create_llm(svc.settings)
    if llm is None:
        return ExtractiveSummariser(config.date_headers)
    return LLMSummariser(llm, config.date_headers)


def check_conversation_id(value: Any) -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > MAX_ID_CHARS:
        raise ValidationError(
            f"conversation_id must be a non-empty string of at most {MAX_ID_CHARS} characters"
        )
    return value


class ContextEngine:
    """The context engine over one tenant's ``MemoryService``."""

    def __init__(
        self,
        service: MemoryService | Any,
        config: ContextConfig | None = None,
        summariser: Summariser | None = None,
    ) -> None:
        """``service``: a ``MemoryService``, or a ``memoryd.Memory`` (its service is used)."""
        service = getattr(service, "service", service)
        if not isinstance(service, MemoryService):
            raise TypeError("ContextEngine needs a memoryd.Memory or a MemoryService")
        self.svc = service
        self.config = config or config_from(service)
        self.store = ContextStore(service.engine.sqlite_store)
        self.triples = TripleStore(service.engine.sqlite_store)
        self.summariser = summariser or default_summariser(service, self.config)
        self.compactor = Compactor(self.store, self.config, self.summariser)
        self.recall = Recall(service, self.config, self.triples)

    def for_tenant(self, tenant_id: str) -> ContextEngine:
        return ContextEngine(self.svc.for_tenant(tenant_id), self.config, self.summariser)

    # ------------------------------------------------------------------ conversations
    def _conv(self, conversation_id: str) -> int:
        return self.store.conversation(
            self.svc.tenant_id, check_conversation_id(conversation_id)
        ).rowid

    def conversation(self, conversation_id: str) -> dict[str, Any]:
        """The conversation's counts and context items (what stands for what)."""
        conv = self.store.conversation(self.svc.tenant_id, check_conversation_id(conversation_id))
        with self.svc.store.read() as conn:
            items = self.store.items(conn, conv.rowid)
            count = self.store.next_seq(conn, conv.rowid)
            summaries = self.store.summaries(conn, [i.ref for i in items if i.kind == "summary"])
            messages = self.store.message_rows(conn, [i.ref for i in items if i.kind == "message"])
        return {
            **conv.to_json(),
            "messages": count,
            "context_items": [
                {"kind": "summary", "id": summaries[i.ref].id}
                if i.kind == "summary"
                else {
                    "kind": "message",
                    "id": messages[i.ref].message_id or f"m{messages[i.ref].seq}",
                }
                for i in items
            ],
        }

    def list_conversations(self, limit: int = 100) -> list[dict[str, Any]]:
        return self.store.list_conversations(self.svc.tenant_id, limit)

    # ------------------------------------------------------------------ ingest
    def ingest(
        self, conversation_id: str, message: dict[str, Any], **options: Any
    ) -> IngestOutcome:
        """One message; a message already held (same id, or same content hash) is skipped."""
        return self.ingest_batch(conversation_id, [message], **options)

    def ingest_batch(
        self,
        conversation_id: str,
        messages: Sequence[dict[str, Any]],
        *,
        agent_id: str | None = None,
        title: str = "",
    ) -> IngestOutcome:
        """Messages in order, in one transaction: all stored, or none."""
        conversation_id = check_conversation_id(conversation_id)
        prepared = prepare_all(messages, self.config.large_part_chars, MAX_BATCH_MESSAGES)
        if self.config.remember_turns:
            # first, and idempotent (a session's repeats are skipped): a failure here leaves
            # nothing stored, and a retry after a failure below remembers nothing twice
            self._remember(conversation_id, [p.message for p in prepared], agent_id)
        outcome = IngestOutcome()
        with self.svc.store.write() as conn:
            conv = self.store.ensure(conn, self.svc.tenant_id, conversation_id, agent_id, title)
            ids, hashes = self.store.known(
                conn,
                conv,
                [p.message.message_id for p in prepared if p.message.message_id is not None],
                [p.message.content_hash for p in prepared],
            )
            fresh: list[NewMessage] = []
            for p in prepared:
                m = p.message
                if (m.message_id is not None and m.message_id in ids) or (
                    m.message_id is None and m.content_hash in hashes
                ):
                    outcome.duplicates += 1
                    continue
                if m.message_id is not None:
                    ids.add(m.message_id)
                hashes.add(m.content_hash)
                for blob in p.blobs:
                    self.store.put_blob(conn, self.svc.tenant_id, blob.id, blob.name, blob.content)
                fresh.append(m)
            outcome.stored = self.store.append(conn, conv, fresh)
            for stored in outcome.stored:
                self.triples.add(
                    conn, self.svc.tenant_id, extract(stored.content, stored.role), "message"
                )
        return outcome

    def _remember(
        self, conversation_id: str, messages: Sequence[NewMessage], agent_id: str | None
    ) -> None:
        """The turns as long-term memories (raw capture: embedded, searchable next week)."""
        turns = [m for m in messages if m.content.strip()]
        if not turns:
            return
        self.svc.ingest(
            [{"role": m.role, "content": m.content} for m in turns],
            session_id=conversation_id,
            agent_id=agent_id,
            dates=[from_us(m.created_at_us) for m in turns],
            source="context",
        )

    # ------------------------------------------------------------------ compaction
    def after_turn(self, conversation_id: str, budget_tokens: int) -> Report:
        """Compact if the context passed ``contextThreshold`` of ``budget_tokens``."""
        budget = check_budget(budget_tokens)
        conv = self._conv(conversation_id)
        report = self.compactor.run(conv, int(budget * self.config.context_threshold))
        self._summaries_to_memory(conversation_id, report)
        return report

    def compact(self, conversation_id: str) -> Report:
        """Compact everything but the fresh tail now, whatever the budget."""
        conv = self._conv(conversation_id)
        report = self.compactor.run(conv, None)
        self._summaries_to_memory(conversation_id, report)
        return report

    def _summaries_to_memory(self, conversation_id: str, report: Report) -> None:
        """Each summary's triples into the knowledge graph (those the summariser gave, and
        the rules' over its lines), and, unless turned off, the summary through smart
        ingest: its lines, as the speakers said them."""
        for summary in report.made:
            turns = summary_turns(summary)
            with self.svc.store.write() as conn:
                for turn in turns:
                    self.triples.add(
                        conn, self.svc.tenant_id, extract(turn["content"], turn["role"]), "summary"
                    )
                said = [Triple(*t) for t in summary.triples]
                self.triples.add(conn, self.svc.tenant_id, said, self.summariser.name)
            if turns and self.config.remember_summaries:
                result = self.svc.ingest(
                    turns,
                    session_id=SUMMARY_SESSION.format(conversation=conversation_id),
                    mode="smart",
                    source=SUMMARY_SOURCE,
                )
                report.memory_tasks.append(result.task_id)

    # ------------------------------------------------------------------ assembly
    def assemble(
        self, conversation_id: str, budget_tokens: int, query: str | None = None
    ) -> Assembled:
        """The messages to send now, within ``budget_tokens``."""
        if query is not None and not isinstance(query, str):
            raise ValidationError("query must be text")
        budget = check_budget(budget_tokens)
        try:
            conv = self._conv(conversation_id)
        except NotFoundError:
            # nothing of it ingested yet (a host's first prompt): what memoryd recalls for
            # it is all there is to add, and the host sends its own messages beside it
            return assemble([], [], self.recall, self.config, budget, query)
        history, tail = self._context(conv)
        in_context = {m.rowid for m in history if isinstance(m, StoredMessage)}
        in_context |= {m.rowid for m in tail}

        def compacted(text: str, n: int) -> list[StoredMessage]:
            """The best matches among the messages only a summary stands for now."""
            found = []
            for hit in grep(self.store, conv, text, n + len(in_context)):
                if hit.kind != "message":
                    continue
                with self.svc.store.read() as conn:
                    message = self.store.message_by_id(conn, conv, hit.id)
                if message is not None and message.rowid not in in_context:
                    found.append(message)
                if len(found) >= n:
                    break
            return found

        return assemble(history, tail, self.recall, self.config, budget, query, compacted)

    def _context(self, conv: int) -> tuple[list[StoredMessage | Summary], list[StoredMessage]]:
        with self.svc.store.read() as conn:
            items = self.store.items(conn, conv)
            messages = {
                m.rowid: m
                for m in self.store.messages(conn, [i.ref for i in items if i.kind == "message"])
            }
            summaries = self.store.summaries(conn, [i.ref for i in items if i.kind == "summary"])
        resolved: list[StoredMessage | Summary] = [
            messages[i.ref] if i.kind == "message" else summaries[i.ref] for i in items
        ]
        positions = [n for n, item in enumerate(resolved) if isinstance(item, StoredMessage)]
        start = (
            positions[max(0, len(positions) - self.config.fresh_tail_count)]
            if positions
            else len(resolved)
        )
        tail = [m for m in resolved[start:] if isinstance(m, StoredMessage)]
        return resolved[:start], tail

    # ------------------------------------------------------------------ the two tools
    def grep(self, conversation_id: str, query: str, limit: int = 20) -> list[GrepHit]:
        """``lcm_grep``: exact and full-text matches in its messages and summaries."""
        if not isinstance(query, str) or not query.strip():
            raise ValidationError("query must be non-empty text")
        if (
            isinstance(limit, bool)
            or not isinstance(limit, int)
            or not 1 <= limit <= MAX_GREP_LIMIT
        ):
            raise ValidationError(f"limit must be between 1 and {MAX_GREP_LIMIT}")
        try:
            conv = self._conv(conversation_id)
        except NotFoundError:
            return []  # nothing ingested into it yet: nothing to find
        return grep(self.store, conv, query, limit)

    def expand(
        self, conversation_id: str, summary_id: str | None = None, query: str | None = None
    ) -> dict[str, Any]:
        """``lcm_expand_query``: a summary (or the best grep hit of a query) to its raw
        messages, whole: every large part put back from where it was stored."""
        if (summary_id is None) == (query is None):
            raise ValidationError("give exactly one of summary_id and query")
        conv = self._conv(conversation_id)
        hits = grep(self.store, conv, str(query), MAX_GREP_LIMIT) if query is not None else []
        found: list[str] = []
        rowids: list[int] = []
        with self.svc.store.read() as conn:
            if summary_id is not None:
                if not isinstance(summary_id, str):
                    raise ValidationError("summary_id must be text")
                summary = self.store.summary_by_id(conn, conv, summary_id)
                if summary is not None:
                    found.append(summary.id)
                    rowids = self.store.leaf_messages(conn, summary.rowid)
                else:
                    message = self.store.message_by_id(conn, conv, summary_id)
                    if message is None:
                        raise NotFoundError(f"summary {summary_id}")
                    rowids = [message.rowid]
            else:
                for hit in hits:
                    if hit.kind == "summary":
                        s = self.store.summary_by_id(conn, conv, hit.id)
                        if s is not None:
                            found.append(s.id)
                            rowids += self.store.leaf_messages(conn, s.rowid)
                    else:
                        m = self.store.message_by_id(conn, conv, hit.id)
                        if m is not None:
                            rowids.append(m.rowid)
                    if len(found) >= 3 or len(rowids) >= MAX_EXPAND_MESSAGES:
                        break
            messages = self.store.messages(conn, list(dict.fromkeys(rowids))[:MAX_EXPAND_MESSAGES])
            blobs = self.store.blobs(
                conn, self.svc.tenant_id, [b for m in messages for b in pointer_ids(m.content)]
            )
        return {
            "summaries": found,
            "messages": [whole(m, blobs) for m in messages],
        }

    def check(self, conversation_id: str) -> list[str]:
        """What is wrong with the conversation's DAG; empty when the invariant holds."""
        conv = self._conv(conversation_id)
        with self.svc.store.read() as conn:
            return check_invariant(self.store, conn, conv, self.config.fresh_tail_count)

    # ------------------------------------------------------------------ bootstrap
    def bootstrap(
        self,
        conversation_id: str,
        transcript: str | Path,
        *,
        format: str | None = None,
        agent_id: str | None = None,
    ) -> dict[str, Any]:
        """Rebuild a conversation from a transcript (Claude Code JSONL, OpenClaw JSONL or a
        JSON list), idempotently: what is already held is skipped. A malformed transcript
        is refused, naming the line, and nothing of it is stored."""
        messages, detected = read_transcript(transcript, format)
        if not messages:
            raise ValidationError("the transcript holds no messages")
        outcome = self.ingest_batch(conversation_id, messages, agent_id=agent_id)
        return {"format": detected, **outcome.to_json()}
