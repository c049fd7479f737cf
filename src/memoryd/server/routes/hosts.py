"""What host plugins in other languages (OpenClaw, OpenCode) ask of memoryd beyond the API.

They send the user's words here rather than re-implement the Python rules:

* ``POST /v1/remember`` keeps what a user asked to be remembered as pinned
  memories, by the rules of ``memoryd.text.remember``: only the sentences
  that carry a keyword ("remember that …", "记住 …"), never a question, and
  only when something besides the request is left. Each sentence is its own
  memory under a key made of its words, so the same message twice keeps one.
  A message a host wrapped whole in quote marks (``opencode run "…"``) is read
  without them, as a captured turn is (``ingest.conversation.unquoted``).
* ``GET /v1/recall`` answers the fenced recall block a prompt gets
  (``memoryd.inject.render_context``, as the Claude Code hooks inject it): the
  memories found for ``q`` (the newest without one) and the user's profile,
  within ``budget_tokens``.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from memoryd.errors import ValidationError
from memoryd.inject import DEFAULT_BUDGET_TOKENS, render_context
from memoryd.profile import build_profile
from memoryd.server.responses import ERROR_RESPONSES, Recalled, Remembered
from memoryd.server.schemas import Body
from memoryd.text.conversation import unquoted
from memoryd.text.remember import memory_key, remember_request
from memoryd.web.deps import AgentHeader, Caller, memory_json, ok
from memoryd.web.errors import CompactJSON

router = APIRouter(tags=["memories"], responses=ERROR_RESPONSES)


class RememberBody(Body):
    text: str
    tags: list[str] | None = None
    source: str | None = None
    session_id: str | None = None


@router.post("/v1/remember", response_model=Remembered)
def remember(body: RememberBody, svc: Caller, x_agent_id: AgentHeader = None) -> CompactJSON:
    """``{"memories": [...], "bare": bool}``: ``bare`` when the user asked without saying what."""
    request = remember_request(unquoted(body.text))  # the quote marks a host wrapped it in off
    if request is None:
        return ok({"memories": [], "bare": False})
    given: dict[str, Any] = {
        "tags": body.tags,
        "source": body.source,
        "agent_id": x_agent_id,
        "session_id": body.session_id,
    }
    fields = {k: v for k, v in given.items() if v is not None}
    stored = [svc.add(fact, key=memory_key(fact), **fields) for fact in request.facts]
    return ok({"memories": [memory_json(m) for m in stored], "bare": request.bare})


MAX_QUERY_CHARS = 500  # a prompt's start says what it is about


@router.get("/v1/recall", response_model=Recalled)
def recall(
    svc: Caller,
    q: str | None = None,
    limit: int = 10,
    budget_tokens: int = DEFAULT_BUDGET_TOKENS,
    exclude_session: str | None = None,
    profile: bool = True,
) -> CompactJSON:
    """``{"text", "count"}``: the block to inject (``""`` when nothing is known)."""
    if not 1 <= limit <= 100 or budget_tokens < 1:
        raise ValidationError("limit must be 1 to 100 and budget_tokens positive")
    query = (q or "").strip()[:MAX_QUERY_CHARS]
    found: list[Any] = (
        svc.search(query, limit=limit, exclude_session=exclude_session).results
        if query
        else svc.list_memories(limit=limit, current=True)[0]
    )
    facts = build_profile(svc) if profile else None
    text = render_context(found, profile=facts, budget_tokens=budget_tokens)
    return ok({"text": text, "count": len(found)})
