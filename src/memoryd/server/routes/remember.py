"""``POST /v1/remember``: keep what a user asked to be remembered, as pinned memories.

Host plugins in other languages (the OpenCode plugin) send the user's message
here rather than re-implement the rules of ``memoryd.hooks.remember``: only
the sentences that carry a keyword ("remember that …", "记住 …"), never a
question, and only when something besides the request is left. Each sentence
is its own memory under a key made of its words, so sending the same message
twice keeps one.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from memoryd.hooks.remember import memory_key, remember_request
from memoryd.server.deps import AgentHeader, Caller, memory_json, ok
from memoryd.server.errors import CompactJSON
from memoryd.server.schemas import Body

router = APIRouter(tags=["memories"])


class RememberBody(Body):
    text: str
    tags: list[str] | None = None
    source: str | None = None
    session_id: str | None = None


@router.post("/v1/remember")
def remember(body: RememberBody, svc: Caller, x_agent_id: AgentHeader = None) -> CompactJSON:
    """``{"memories": [...], "bare": bool}``: ``bare`` when the user asked without saying what."""
    request = remember_request(body.text)
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
