"""UserPromptSubmit: memories relevant to the prompt, and "remember this" kept on request.

The prompt is the best query there is for what the user is about to need,
so it is searched (semantic and keyword) before the model sees it. Turns of
the current session are left out: they are in the context already.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from functools import partial
from typing import Any

from memoryd.hooks.backend import HookBackend
from memoryd.hooks.config import HookConfig
from memoryd.hooks.output import HookResult, attempt, context_output
from memoryd.inject import estimate_tokens, inert, render_context
from memoryd.models import Memory as MemoryRecord
from memoryd.models import ScoredMemory
from memoryd.privacy import redact
from memoryd.text.remember import memory_key, remember_request, rest_of_prompt

log = logging.getLogger(__name__)

EVENT = "UserPromptSubmit"
SEARCH_LIMIT = 10
# a prompt's start says what it is about; a pasted log after it only blurs the query
MAX_QUERY_CHARS = 500
MIN_QUERY_CHARS = 3
REMEMBER_TAGS = ["remembered", "claude-code"]
SAVED_NOTE = "memoryd saved to long-term memory, as the user asked: "
BARE_NOTE = (
    "The user asked to remember something from this conversation without saying it in "
    "this prompt: save what they mean with the memory_store tool (memoryd MCP server)."
)


def run(payload: Mapping[str, Any], backend: HookBackend, config: HookConfig) -> HookResult:
    prompt = payload.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        return HookResult()
    request = remember_request(prompt)
    # recall first, with what the prompt asks about: a note saved from this very prompt
    # would top the search and push everything else under the relative floor
    session = payload.get("session_id")
    current = session if isinstance(session, str) and session else None
    found = _recall(prompt, request is not None, backend, current)
    notes: list[str] = []
    saved: list[MemoryRecord] = []
    if request is not None:
        for fact in request.facts:
            public = redact(fact)  # before the key too: no slot derived from private text
            if public is None:
                continue
            memory = attempt("remember", partial(_remember, backend, public), None)
            if memory is not None:
                saved.append(memory)
        shown = [s for s in (inert(m.content) for m in saved) if s]
        if shown:
            notes.append(SAVED_NOTE + " | ".join(f'"{s}"' for s in shown))
        if request.bare:
            notes.append(BARE_NOTE)
    skip = {m.id for m in saved}
    results = [
        r
        for r in found
        if r.memory.id not in skip
        and (r.similarity is None or r.similarity >= config.min_similarity)
    ]
    # the notes are part of what the prompt costs: the recall gets what they leave
    budget = config.prompt_tokens - (estimate_tokens("\n\n".join(notes)) + 1 if notes else 0)
    text = render_context(results, budget_tokens=max(0, budget))
    context = "\n\n".join(part for part in (text, *notes) if part)
    log.info(
        "user-prompt: %d memories found, %d relevant, %d saved, injected %d tokens",
        len(found),
        len(results),
        len(saved),
        estimate_tokens(context),
    )
    return HookResult(context_output(EVENT, context))


def _recall(
    prompt: str, asks_to_remember: bool, backend: HookBackend, session: str | None
) -> list[ScoredMemory]:
    """Memories for the prompt, searched with the rest of it when it also asks to remember.

    The turns of ``session`` (this conversation) are left out by the search
    itself: they are in the context already, and would take the places of
    older memories in the results.
    """
    text = prompt.strip()
    if asks_to_remember:
        rest = rest_of_prompt(text)
        text = rest if len(rest) >= MIN_QUERY_CHARS else text
    query = redact(text)  # a private block is not a search term either
    if not query or len(query) < MIN_QUERY_CHARS:
        return []
    empty: list[ScoredMemory] = []
    return attempt(
        "search", lambda: backend.search(query[:MAX_QUERY_CHARS], SEARCH_LIMIT, session), empty
    )


def _remember(backend: HookBackend, fact: str) -> MemoryRecord | None:
    return backend.remember(fact, tags=REMEMBER_TAGS, key=memory_key(fact))
