"""What a proxied request is given: memories recalled for its last words, as one block.

The query is the last user message, with the one before it when the last is
short ("and in Go?" means little alone). The strategies are seed 002's:
``recent`` (the newest distilled memories), ``semantic`` (memoryd's hybrid
search, vectors and BM25), ``hybrid`` (the search's hits first, then the
newest that are about the question too). Hits and newest alike must be
within the recall floor of the question (``RECALL_MIN_SIMILARITY``): an
unrelated question does not bring the whole store along. Only memories of
the retention window that are live now (not expired, not superseded) are
candidates; the block is rendered by
:func:`memoryd.inject.render_context` within the token budget, CJK-aware.
"""

from __future__ import annotations

import sys
from datetime import timedelta

from memoryd.errors import ValidationError
from memoryd.inject import RECALL_MIN_SIMILARITY, render_context
from memoryd.models import Memory, MemoryType, State, utcnow
from memoryd.proxy.settings import MemorySettings
from memoryd.retrieve.subject_match import set_aside
from memoryd.service import MemoryService
from memoryd.store import MemoryFilter
from memoryd.text.conversation import transcript_line

# a last message shorter than this is read together with the one before it
SHORT_QUERY_CHARS = 40
# the query is the end of what was said: a pasted file is not a question
MAX_QUERY_CHARS = 2000
# the search ranks this many; the pipeline costs grow with it, and the budget rarely takes more
SEARCH_LIMIT = 10
RECENT_LIMIT = 30
# a hit scored under this share of the best hit's score is not recalled: search ranks
# another person's fact, a plan or what held once at a tenth of its score under a question
# about none of them (retrieve/subject_match.py)
RECALL_MIN_SHARE = 0.2


def query_of(messages: list[tuple[str, str]]) -> str:
    """The search query for a conversation's (role, text) messages; "" when there is none."""
    said = [text.strip() for role, text in messages if role == "user" and text.strip()]
    if not said:
        return ""
    query = said[-1]
    if len(query) < SHORT_QUERY_CHARS and len(said) > 1:
        query = f"{said[-2]}\n{query}"
    return query[-MAX_QUERY_CHARS:]


def recall_block(
    svc: MemoryService,
    settings: MemorySettings,
    messages: list[tuple[str, str]],
    session_id: str | None = None,
    exclude_session: str | None = None,
) -> str:
    """The fenced block for a request, or "" when memory is off or nothing is recalled.

    ``session_id`` (a session the client names) narrows recall to it;
    ``exclude_session`` (the conversation in progress) leaves its own turns
    out: they are in the request already, the question being asked among them.
    """
    if not settings.enabled or settings.max_tokens <= 0:
        return ""
    now = utcnow()
    since = now - timedelta(days=settings.retention_days)
    query = query_of(messages)
    found: list[Memory] = []
    aside: set[str] = set()
    if settings.strategy in ("semantic", "hybrid") and query:
        try:
            response = svc.search(
                query,
                limit=SEARCH_LIMIT,
                session_id=session_id,
                exclude_session=exclude_session,
                created_after=since,
                now=now,
            )
        except ValidationError:  # a query the search refuses (only punctuation): recall none
            response = None
        if response is not None:  # what is near enough the question to be about it
            best = max((hit.score for hit in response.results), default=0.0)
            for hit in response.results:
                near = hit.similarity is None or hit.similarity >= RECALL_MIN_SIMILARITY
                # far below the best: what search set aside for this question (another
                # person's fact, a plan, what held once), not recalled beside the answer
                if near and hit.score >= RECALL_MIN_SHARE * best:
                    found.append(hit.memory)
                else:
                    aside.add(hit.memory.id)
    if settings.strategy in ("recent", "hybrid"):
        recent, _ = svc.store.list_memories(
            svc.tenant_id,
            svc.spaces.readable_spaces(),
            svc.scoped(
                MemoryFilter(
                    session_id=session_id,
                    not_session_id=exclude_session,
                    state=[State.ACTIVE],
                    created_after=since,
                    live_at=now,
                    exclude_types=(MemoryType.SESSION,),
                )
            ),
            limit=RECENT_LIMIT,
            with_total=False,
        )
        if settings.strategy == "hybrid" and query:  # beside a question: only what is about it
            recent = [
                m
                for m in _near(svc, query, recent)
                if m.id not in aside and set_aside(m.marks, m.content, query) is None
            ]
        found.extend(recent)
    # what the request itself says (a turn, a fact taken from one) is in the prompt already
    said = "\n".join(_norm(transcript_line(role, text)) for role, text in messages)
    fresh = [m for m in found if _norm(m.content) not in said]
    if not fresh:
        return ""
    return render_context(fresh, budget_tokens=settings.max_tokens, now=now, max_chars=sys.maxsize)


def _near(svc: MemoryService, query: str, memories: list[Memory]) -> list[Memory]:
    """The memories whose vectors are within the recall floor of the query's: the vector
    the search just computed for it (as ``similarity`` is), not a second embedding."""
    asked = svc.retriever.query_vector(query) if memories else None
    if asked is None:  # nothing to weigh, or no vector: nothing shown to be near
        return []
    vectors = svc.store.vectors_of([m.id for m in memories])
    return [
        m
        for m in memories
        if m.id in vectors and float(vectors[m.id] @ asked) >= RECALL_MIN_SIMILARITY
    ]


def _norm(text: str) -> str:
    return " ".join(text.casefold().split())
