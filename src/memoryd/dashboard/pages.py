"""What every dashboard page is made with: the templates, the signed-in viewer, a page
rendered with its form token, a redirect after a form.

The pages' modules (:mod:`memoryd.dashboard.routes`, ``conversations``, ``data``,
``settings``, ``spaces``) build on these; :mod:`memoryd.dashboard.app` mounts them.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, Request
from fastapi.responses import HTMLResponse, RedirectResponse
from jinja2 import Environment, PackageLoader, select_autoescape

from memoryd.dashboard.protect import form_token
from memoryd.dashboard.values import shown, when
from memoryd.models import Category, MemoryType, State, Tier
from memoryd.service import MemoryService
from memoryd.web.session import FORM_COOKIE

PAGE_SIZE = 20
SEARCH_LIMIT = 20
STATIC = "/dashboard/static"

templates = Environment(
    loader=PackageLoader("memoryd.dashboard", "templates"),
    autoescape=select_autoescape(default=True, default_for_string=True),
    trim_blocks=True,
    lstrip_blocks=True,
)
templates.filters["when"] = when
templates.filters["shown"] = shown


class SignInRequired(Exception):
    """A dashboard page asked for without a valid key: the browser goes to sign in."""


def viewer(request: Request) -> MemoryService:
    """The service as the signed-in tenant sees it (the guard found the tenant)."""
    tenant = getattr(request.state, "tenant", None)
    if tenant is None:
        raise SignInRequired
    root: MemoryService = request.app.state.service
    return root.for_tenant(tenant.id)


Viewer = Annotated[MemoryService, Depends(viewer)]


def page(request: Request, name: str, status: int = 200, **context: Any) -> HTMLResponse:
    token, fresh = form_token(request)
    context.update(
        request=request,
        csrf=token,
        static=STATIC,
        signed_in=getattr(request.state, "tenant", None) is not None,
        categories=[c.value for c in Category],
        types=[t.value for t in MemoryType],
        states=[s.value for s in State],
        tiers=[t.value for t in Tier],
    )
    response = HTMLResponse(templates.get_template(name).render(context), status_code=status)
    if fresh is not None:  # the session the page's forms are bound to, from now on
        response.set_cookie(FORM_COOKIE, fresh, httponly=True, samesite="strict", path="/")
    return response


def see_other(url: str) -> RedirectResponse:
    return RedirectResponse(url, status_code=303)
