"""The dashboard's settings page: the memory proxy's per-tenant settings, and what the
server runs with (LLM, embedding model, upstream) as far as a tenant may see it.

The proxy settings are the ones ``GET`` / ``PUT /api/settings/memory`` read and
write (the same validation, the same cache invalidation); the server's own
configuration is read-only here: it belongs to whoever runs ``memoryd serve``.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import Response

from memoryd.dashboard.pages import Viewer, page, see_other
from memoryd.dashboard.protect import check_form
from memoryd.errors import ValidationError
from memoryd.proxy.settings import MemorySettings
from memoryd.service import MemoryService

router = APIRouter(include_in_schema=False, dependencies=[Depends(check_form)])
STRATEGIES = ("hybrid", "semantic", "recent")


def _page(
    request: Request,
    svc: MemoryService,
    status: int = 200,
    error: str = "",
    saved: bool = False,
) -> Response:
    memory: MemorySettings = request.app.state.proxy.settings.get(svc.tenant_id)
    return page(
        request,
        "settings.html",
        status,
        memory=memory.public(),
        strategies=STRATEGIES,
        server=_server(svc),
        error=error,
        saved=saved,
    )


def _server(svc: MemoryService) -> dict[str, Any]:
    """What the server runs with, no secret and no address: only whether each is set."""
    s = svc.settings
    return {
        "llm": s.llm_model or None,
        "llm_configured": bool(s.llm_base_url and s.llm_model),
        "embedding_model": svc.store.get_meta("embed_model"),
        "upstream_configured": bool(s.upstream_url),
    }


@router.get("/settings")
def settings(request: Request, svc: Viewer, saved: bool = False) -> Response:
    return _page(request, svc, saved=saved)


@router.post("/settings")
def save_settings(
    request: Request,
    svc: Viewer,
    enabled: Annotated[str, Form()] = "",
    max_tokens: Annotated[str, Form()] = "",
    retention_days: Annotated[str, Form()] = "",
    strategy: Annotated[str, Form()] = "hybrid",
    no_system_role_providers: Annotated[str, Form()] = "",
) -> Response:
    changes = {
        "enabled": enabled == "on",
        "maxTokens": max_tokens.strip(),
        "retentionDays": retention_days.strip(),
        "strategy": strategy,
        "noSystemRoleProviders": [
            p.strip() for p in no_system_role_providers.split(",") if p.strip()
        ],
    }
    try:
        request.app.state.proxy.settings.update(svc.tenant_id, changes)
    except ValidationError as exc:
        return _page(request, svc, 400, error=exc.message)
    return see_other("/settings?saved=true")
