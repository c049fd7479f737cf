"""The dashboard's spaces page: the spaces one belongs to, invitations, and sharing.

Spaces say which people share memories (personal, team, organisation);
each action is one call of the tenancy services the REST routes use, so the
same rules hold: only an admin adds members, an owner cannot leave, nothing
of a space reaches one's recall before its invitation is accepted.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import Response

from memoryd.dashboard.pages import Viewer, page, see_other
from memoryd.dashboard.protect import check_form
from memoryd.errors import ValidationError
from memoryd.service import MemoryService

router = APIRouter(include_in_schema=False, dependencies=[Depends(check_form)])
ROLES = ("reader", "member", "admin")


def _page(request: Request, svc: MemoryService, status: int = 200, error: str = "") -> Response:
    return page(
        request,
        "spaces.html",
        status,
        spaces=svc.spaces.list_spaces(),
        invitations=svc.spaces.invitations(),
        me=svc.tenant_id,
        roles=ROLES,
        error=error,
    )


@router.get("/spaces")
def spaces(request: Request, svc: Viewer) -> Response:
    return _page(request, svc)


@router.post("/spaces")
def create_space(request: Request, svc: Viewer, name: Annotated[str, Form()] = "") -> Response:
    try:
        svc.spaces.create(name, "team")
    except ValidationError as exc:
        return _page(request, svc, 400, exc.message)
    return see_other("/spaces")


@router.post("/spaces/members")
def add_member(
    request: Request,
    svc: Viewer,
    space_id: Annotated[str, Form()],
    user_id: Annotated[str, Form()] = "",
    role: Annotated[str, Form()] = "member",
) -> Response:
    try:
        svc.spaces.add_member(space_id, user_id.strip(), role)
    except ValidationError as exc:
        return _page(request, svc, 400, exc.message)
    return see_other("/spaces")


@router.post("/spaces/invitations")
def answer(
    svc: Viewer, space_id: Annotated[str, Form()], answer: Annotated[str, Form()]
) -> Response:
    if answer == "accept":
        svc.spaces.accept(space_id)
    elif answer == "decline":
        svc.spaces.decline(space_id)
    else:
        raise ValidationError(f"answer must be accept or decline, not {answer[:20]!r}")
    return see_other("/spaces")


@router.post("/spaces/leave")
def leave(request: Request, svc: Viewer, space_id: Annotated[str, Form()]) -> Response:
    try:
        svc.spaces.leave(space_id)
    except ValidationError as exc:
        return _page(request, svc, 400, exc.message)
    return see_other("/spaces")


@router.post("/memories/{memory_id}/share")
def share(svc: Viewer, memory_id: str, space_id: Annotated[str, Form()]) -> Response:
    memory = svc.get(memory_id)
    svc.sharing.share(memory.id, space_id)
    return see_other(f"/memories/{memory.id}")
