"""The context engine over REST (``/v1/context/...``): what a host plugin delegates to.

One route per ContextEngine operation (ingest, ingest batch, assemble,
after-turn, compact, bootstrap, grep, expand), each inside the caller's
tenant: another tenant's conversation is a 404 like one that does not exist.
See docs/context.md for the contract.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from memoryd.context import ContextEngine
from memoryd.server.responses import ERROR_RESPONSES, Object
from memoryd.server.schemas import Body
from memoryd.web.deps import Caller, ok
from memoryd.web.errors import CompactJSON

router = APIRouter(tags=["context"], responses=ERROR_RESPONSES)


class IngestBody(Body):
    message: dict[str, Any]
    agent_id: str | None = None
    title: str = ""


class BatchBody(Body):
    messages: list[Any]
    agent_id: str | None = None
    title: str = ""


class AssembleBody(Body):
    budget_tokens: int
    query: str | None = None


class BudgetBody(Body):
    budget_tokens: int


class BootstrapBody(Body):
    transcript: str
    format: str | None = None
    agent_id: str | None = None


class GrepBody(Body):
    query: str
    limit: int = 20


class ExpandBody(Body):
    summary_id: str | None = None
    query: str | None = None


def _engine(svc: Caller) -> ContextEngine:
    return ContextEngine(svc)


@router.get("/v1/context", response_model=Object)
def list_conversations(svc: Caller, limit: int = 100) -> CompactJSON:
    return ok({"conversations": _engine(svc).list_conversations(max(1, min(limit, 1000)))})


@router.get("/v1/context/{conversation_id}", response_model=Object)
def conversation(conversation_id: str, svc: Caller) -> CompactJSON:
    return ok(_engine(svc).conversation(conversation_id))


@router.post("/v1/context/{conversation_id}/ingest", response_model=Object)
def ingest(conversation_id: str, body: IngestBody, svc: Caller) -> CompactJSON:
    outcome = _engine(svc).ingest(
        conversation_id, body.message, agent_id=body.agent_id, title=body.title
    )
    return ok(outcome.to_json())


@router.post("/v1/context/{conversation_id}/ingest-batch", response_model=Object)
def ingest_batch(conversation_id: str, body: BatchBody, svc: Caller) -> CompactJSON:
    outcome = _engine(svc).ingest_batch(
        conversation_id, body.messages, agent_id=body.agent_id, title=body.title
    )
    return ok(outcome.to_json())


@router.post("/v1/context/{conversation_id}/assemble", response_model=Object)
def assemble(conversation_id: str, body: AssembleBody, svc: Caller) -> CompactJSON:
    return ok(_engine(svc).assemble(conversation_id, body.budget_tokens, body.query).to_json())


@router.post("/v1/context/{conversation_id}/after-turn", response_model=Object)
def after_turn(conversation_id: str, body: BudgetBody, svc: Caller) -> CompactJSON:
    return ok(_engine(svc).after_turn(conversation_id, body.budget_tokens).to_json())


@router.post("/v1/context/{conversation_id}/compact", response_model=Object)
def compact(conversation_id: str, svc: Caller) -> CompactJSON:
    return ok(_engine(svc).compact(conversation_id).to_json())


@router.post("/v1/context/{conversation_id}/bootstrap", response_model=Object)
def bootstrap(conversation_id: str, body: BootstrapBody, svc: Caller) -> CompactJSON:
    return ok(
        _engine(svc).bootstrap(
            conversation_id, body.transcript, format=body.format, agent_id=body.agent_id
        )
    )


@router.post("/v1/context/{conversation_id}/grep", response_model=Object)
def grep(conversation_id: str, body: GrepBody, svc: Caller) -> CompactJSON:
    hits = _engine(svc).grep(conversation_id, body.query, body.limit)
    return ok({"hits": [h.to_json() for h in hits]})


@router.post("/v1/context/{conversation_id}/expand", response_model=Object)
def expand(conversation_id: str, body: ExpandBody, svc: Caller) -> CompactJSON:
    return ok(_engine(svc).expand(conversation_id, body.summary_id, body.query))
