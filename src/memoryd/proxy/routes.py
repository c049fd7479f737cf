"""The proxy's doors: ``POST /v1/chat/completions``, ``POST /v1/messages``, ``GET /v1/models``.

Thin: the Guard has identified the tenant (by ``Authorization: Bearer`` or
``X-API-Key``), :class:`memoryd.proxy.forward.Proxy` does the rest.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from starlette.responses import Response

from memoryd.proxy.forward import Proxy, dialect_for
from memoryd.proxy.wire import ANTHROPIC, OPENAI
from memoryd.web.guard import tenant_of

router = APIRouter(tags=["proxy"])
# what the upstream answers, passed through: its JSON, or its event stream with "stream"
UPSTREAM_ANSWER: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "the upstream's answer, as it sent it",
        "content": {"text/event-stream": {"schema": {"type": "string"}}},
    }
}


def proxy_of(request: Request) -> Proxy:
    proxy: Proxy = request.app.state.proxy
    return proxy


@router.post("/v1/chat/completions", response_model=dict[str, Any], responses=UPSTREAM_ANSWER)
async def chat_completions(request: Request) -> Response:
    """An OpenAI chat completion, with the tenant's memories injected, sent upstream."""
    return await proxy_of(request).chat(request, OPENAI, tenant_of(request.state))


@router.post("/v1/messages", response_model=dict[str, Any], responses=UPSTREAM_ANSWER)
async def messages(request: Request) -> Response:
    """An Anthropic message, with the tenant's memories in ``system``, sent upstream."""
    return await proxy_of(request).chat(request, ANTHROPIC, tenant_of(request.state))


@router.get("/v1/models", response_model=dict[str, Any])
async def models(request: Request) -> Response:
    """The default upstream's models, as it lists them."""
    tenant_of(request.state)
    dialect = dialect_for(request.url.path, request.headers) or OPENAI
    return await proxy_of(request).models(request, dialect)
