"""``MemoryManager``: memory for a Python agent, called at fixed points of its loop.

::

    memory = MemoryManager()                       # local provider, the default home
    block = memory.prefetch(user_message)          # before the turn: into the prompt
    ...                                            # the agent answers
    memory.on_turn_complete(user_message, answer)  # after it: stored, distilled
    memory.queue_prefetch(next_guess)              # warm the next turn's recall
    memory.on_pre_compact(messages)                # before the context is compacted
    memory.on_session_end(messages)                # when the conversation ends
    memory.shutdown()                              # flush pending work

Every lifecycle hook forwards to the active provider and never breaks the
agent's turn: a provider that fails makes ``prefetch`` return an empty block
and the hook log why. What a failed hook was given is kept and sent again
with the next one, so a store that was down for a turn loses nothing;
``shutdown`` raises if something still could not be delivered, with the
messages on the error. The explicit calls (``search``, ``remember``,
``forget``, ``reflect``, ``consolidate``) raise memoryd's errors as they are.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import uuid
from collections.abc import Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

from memoryd.agents.providers.base import (
    FLUSH_TIMEOUT_S,
    MemoryHit,
    MemoryProvider,
    ProviderContext,
    UnsupportedError,
)
from memoryd.agents.providers.registry import ProviderUnavailableError, create_provider
from memoryd.agents.reflect import Reflection, reflect
from memoryd.agents.settings import AgentMemorySettings, load_agent_settings, profile_home
from memoryd.embed import Embedder
from memoryd.errors import MemorydError, ValidationError
from memoryd.inject import MAX_CONTEXT_CHARS, Recalled, render_context
from memoryd.llm import LLMClient

log = logging.getLogger(__name__)

# a query's start says what it is about (as for the prompt hook)
MAX_QUERY_CHARS = 500
# searched before the current session's own turns are left out, so top_k survive
OVERSEARCH = 3
# the characters cap the block; tokens never exceed 1.15 a character (CJK), so this never binds
TOKENS_PER_CHAR_BOUND = 2
REFLECT_LIMIT = 10
# warmed recalls kept for the next turns; older ones are dropped unread
MAX_WARMED = 8
ADD_ACTIONS = frozenset(("add", "remember", "create"))
REPLACE_ACTIONS = frozenset(("replace", "update"))
REMOVE_ACTIONS = frozenset(("remove", "delete", "forget"))


class UndeliveredError(MemorydError):
    """Messages the provider never accepted, even at shutdown; they are on ``messages``."""

    code = "undelivered"
    prefix = "not stored"
    http_status = 503

    def __init__(self, detail: str, messages: list[dict[str, str]]) -> None:
        super().__init__(detail)
        self.messages = messages


def _digest(message: Mapping[str, str]) -> str:
    return hashlib.sha256(f"{message['role']}\0{message['content']}".encode()).hexdigest()


def _messages(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, str]]:
    """Chat messages with text content; others (tool calls without text) carry nothing to keep."""
    if isinstance(messages, str | bytes) or not isinstance(messages, Sequence):
        raise ValidationError("messages must be a list of {'role': ..., 'content': ...}")
    out = []
    for i, m in enumerate(messages):
        if not isinstance(m, Mapping) or not isinstance(m.get("role"), str):
            raise ValidationError(f"message {i} needs a 'role' and a 'content'")
        content = m.get("content")
        if isinstance(content, str) and content.strip():
            out.append({"role": m["role"], "content": content})
    return out


class MemoryManager:
    """One agent's memory, on the active provider of a profile (see the module's doc)."""

    def __init__(
        self,
        profile: str | None = None,
        *,
        home: Path | str | None = None,
        settings: AgentMemorySettings | dict[str, Any] | None = None,
        embedder: Embedder | None = None,
        llm: LLMClient | None = None,
        session_id: str | None = None,
        **overrides: Any,
    ) -> None:
        """``profile`` picks ``<home>/profiles/<profile>/``; ``overrides`` are settings fields.

        ``llm`` answers ``reflect``; by default the one the profile's
        memoryd settings configure (``MEMORYD_LLM_*``), if any.
        """
        self.profile = profile
        self.home = profile_home(profile, home)
        self.settings = load_agent_settings(self.home, settings, **overrides)
        self.session_id = session_id or str(uuid.uuid4())
        self._llm = llm
        self._llm_checked = llm is not None
        self._lock = threading.Lock()
        self._warmed: dict[tuple[str, str], Future[list[MemoryHit]]] = {}
        self._sent: dict[str, set[str]] = {}
        self._unsent: list[tuple[str, list[dict[str, str]]]] = []
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="memoryd-prefetch")
        self._closed = False
        self.provider: MemoryProvider | None = None
        if self.settings.enabled and self.settings.provider is not None:
            context = ProviderContext(self.home, profile, dict(self.settings.options), embedder)
            self.provider = create_provider(self.settings.provider, context)

    # ------------------------------------------------------------------ lifecycle hooks
    def prefetch(self, query: str, session_id: str | None = None) -> str:
        """The recalled block for the prompt before a turn; ``""`` when there is nothing."""
        if self.provider is None or not self.settings.prefetch:
            return ""
        session = session_id or self.session_id
        key = (self._query(query), session)
        if not key[0]:
            return ""
        with self._lock:
            warmed = self._warmed.pop(key, None)
        try:
            hits = warmed.result() if warmed is not None else self._recall(*key)
        except Exception as exc:  # a provider's failure must not break the agent's turn
            log.warning(
                "memoryd: prefetch from provider %r failed, no memories this turn: %s",
                self.settings.provider,
                exc,
            )
            return ""
        shown = [Recalled(h.content, h.category, h.created_at, h.id) for h in hits]
        cap = self.settings.max_prompt_chars
        return render_context(
            shown,
            budget_tokens=cap * TOKENS_PER_CHAR_BOUND,
            max_chars=min(cap, MAX_CONTEXT_CHARS),
        )

    def queue_prefetch(self, query: str, session_id: str | None = None) -> None:
        """Start the recall for ``query`` now; the next ``prefetch`` of it takes the result."""
        if self.provider is None or not self.settings.prefetch or self._closed:
            return
        key = (self._query(query), session_id or self.session_id)
        if not key[0]:
            return
        with self._lock:
            if key in self._warmed:
                return
            while len(self._warmed) >= MAX_WARMED:
                self._warmed.pop(next(iter(self._warmed)))
            self._warmed[key] = self._pool.submit(self._recall, *key)

    def on_turn_complete(self, user: str, assistant: str, session_id: str | None = None) -> None:
        """Store a finished turn and distil it in the background (when ``sync_turns``)."""
        if self.provider is None or not self.settings.sync_turns:
            return
        turn = [{"role": "user", "content": user}, {"role": "assistant", "content": assistant}]
        self._capture(session_id or self.session_id, _messages(turn))

    def on_pre_compact(
        self, messages: Sequence[Mapping[str, Any]], session_id: str | None = None
    ) -> int:
        """Keep every message about to be compacted away that is not stored yet; how many."""
        return self.capture(messages, session_id)

    def capture(self, messages: Sequence[Mapping[str, Any]], session_id: str | None = None) -> int:
        """Store the messages of a session not stored yet (a framework's own history hook);
        how many were new. Distilled in the background, like a turn."""
        if self.provider is None:
            return 0
        return self._capture(session_id or self.session_id, _messages(messages))

    def on_session_end(
        self, messages: Sequence[Mapping[str, Any]] = (), session_id: str | None = None
    ) -> None:
        """Store what the session said that is not stored yet, wait for its distilling,
        and start a new session (when it was the manager's own)."""
        if self.provider is None:
            return
        session = session_id or self.session_id
        self._capture(session, _messages(messages))
        try:
            self.provider.flush()
        except Exception as exc:
            log.warning("memoryd: flushing provider %r failed: %s", self.settings.provider, exc)
        with self._lock:
            self._sent.pop(session, None)
        if session == self.session_id:
            self.session_id = str(uuid.uuid4())

    def on_memory_write(
        self, action: str, target: str, content: str, *, old_content: str | None = None
    ) -> MemoryHit | None:
        """Mirror an edit the agent made to its own memory (a notes file, a memory tool).

        ``action``: add, replace (``old_content`` is what it replaced) or
        remove; ``target`` says what the agent wrote to ("user", "memory") and
        is kept as a tag. A failing provider is logged, not raised.
        """
        if self.provider is None:
            return None
        verb = action.strip().lower() if isinstance(action, str) else ""
        if verb not in ADD_ACTIONS | REPLACE_ACTIONS | REMOVE_ACTIONS:
            raise ValidationError(f"unknown memory write action {action!r}: add, replace, remove")
        tags = [f"target:{target}"] if target else []
        try:
            if verb in REMOVE_ACTIONS:
                found = self._find(content)
                if found is not None:
                    self.provider.forget(found.id)
                return found
            replaces = None
            if verb in REPLACE_ACTIONS and old_content:
                old = self._find(old_content)
                replaces = old.id if old is not None else None
            return self.provider.remember(content, tags=tags, replaces=replaces)
        except Exception as exc:
            log.warning(
                "memoryd: mirroring a memory %s to provider %r failed: %s",
                verb,
                self.settings.provider,
                exc,
            )
            return None

    def shutdown(self, timeout_s: float = FLUSH_TIMEOUT_S) -> None:
        """Deliver what is pending, wait for extraction, close the provider.

        Raises :class:`UndeliveredError` (after closing) when messages could
        still not be stored; they are on the error, to keep elsewhere.
        """
        if self._closed:
            return
        self._closed = True
        self._pool.shutdown(wait=True, cancel_futures=True)
        if self.provider is None:
            return
        self._deliver()
        try:
            self.provider.flush(timeout_s)
        finally:
            self.provider.close()
        if self._unsent:
            lost = [m for _, batch in self._unsent for m in batch]
            raise UndeliveredError(
                f"{len(lost)} message(s) could not be stored by provider "
                f"{self.settings.provider!r}",
                lost,
            )

    def __enter__(self) -> MemoryManager:
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()

    # ------------------------------------------------------------------ explicit calls
    def search(self, query: str, limit: int = 5) -> list[MemoryHit]:
        """The memory tool's search: never the current session's own turns (the question
        being asked among them: the context has them already)."""
        hits = self._active().search(self._query(query) or query, limit=limit * OVERSEARCH)
        return [h for h in hits if not (h.turn and h.session_id == self.session_id)][:limit]

    def remember(self, content: str, *, tags: Sequence[str] = ()) -> MemoryHit:
        return self._active().remember(content, tags=tags)

    def forget(self, memory_id: str) -> None:
        self._active().forget(memory_id)

    def reflect(self, query: str, limit: int = REFLECT_LIMIT) -> Reflection:
        """An answer synthesised across memories, citing their ids (see memoryd.agents.reflect).

        A provider with a reflect of its own answers; otherwise memoryd
        synthesises one from the provider's search, with the LLM if there is one.
        """
        provider = self._active()
        try:
            own = provider.reflect(query, limit=limit)
        except UnsupportedError:
            own = None
        if isinstance(own, Reflection):
            return own
        floor = self.settings.min_similarity
        hits = [
            h
            for h in provider.search(self._query(query) or query, limit=limit)
            if h.similarity is None or h.similarity >= floor
        ]
        return reflect(query, hits, self.llm)

    def consolidate(self, timeout_s: float = FLUSH_TIMEOUT_S) -> dict[str, Any]:
        """Merge duplicates and retire superseded facts, with history (provider permitting)."""
        return self._active().consolidate(timeout_s=timeout_s)

    def history(self, memory_id: str) -> list[dict[str, Any]]:
        return self._active().history(memory_id)

    @property
    def llm(self) -> LLMClient | None:
        """The LLM reflect uses: the one given, else the profile home's memoryd settings'."""
        if not self._llm_checked:
            from memoryd.config import load_settings
            from memoryd.llm import create_llm

            self._llm = create_llm(load_settings(self.home))
            self._llm_checked = True
        return self._llm

    # ------------------------------------------------------------------ internals
    def _active(self) -> MemoryProvider:
        if self.provider is None:
            raise ProviderUnavailableError("memory is disabled in this profile's settings")
        if self._closed:
            raise ValidationError("this MemoryManager was shut down")
        return self.provider

    @staticmethod
    def _query(query: str) -> str:
        if not isinstance(query, str):
            raise ValidationError(f"a query must be text, got {type(query).__name__}")
        return query.strip()[:MAX_QUERY_CHARS]

    def _recall(self, query: str, session: str) -> list[MemoryHit]:
        """Top hits for the prompt: not the current session's own turns (the context has
        them), nothing under the similarity floor."""
        assert self.provider is not None
        floor, top = self.settings.min_similarity, self.settings.top_k
        hits = self.provider.search(query, limit=top * OVERSEARCH)
        kept = [
            h
            for h in hits
            if not (h.turn and h.session_id == session)
            and (h.similarity is None or h.similarity >= floor)
        ]
        return kept[:top]

    def _find(self, content: str) -> MemoryHit | None:
        """The stored memory whose text is ``content`` (case and spacing aside)."""
        assert self.provider is not None
        want = " ".join(content.casefold().split())
        for h in self.provider.search(content, limit=10):
            if not h.turn and " ".join(h.content.casefold().split()) == want:
                return h
        return None

    def _capture(self, session: str, messages: list[dict[str, str]]) -> int:
        """Queue the messages not sent before in this session, then deliver all queued."""
        with self._lock:
            sent = self._sent.setdefault(session, set())
            queued = {_digest(m) for s, batch in self._unsent if s == session for m in batch}
            new = [m for m in messages if _digest(m) not in sent | queued]
            if new:
                self._unsent.append((session, new))
        self._deliver()
        return len(new)

    def _deliver(self) -> None:
        assert self.provider is not None
        with self._lock:
            batches, self._unsent = self._unsent, []
        failed: list[tuple[str, list[dict[str, str]]]] = []
        for i, (session, batch) in enumerate(batches):
            try:
                self.provider.capture(batch, session_id=session)
            except Exception as exc:
                log.warning(
                    "memoryd: provider %r could not store %d message(s), kept to retry: %s",
                    self.settings.provider,
                    sum(len(b) for _, b in batches[i:]),
                    exc,
                )
                failed = batches[i:]
                break
            with self._lock:
                self._sent.setdefault(session, set()).update(_digest(m) for m in batch)
        if failed:
            with self._lock:
                self._unsent = failed + self._unsent
