"""Spaces, members, auto-share rules (§4.16), invitations, and sharing (§4.17).

Space ids contain a slash (``team/<uuid>``); clients send them
percent-encoded, which the server decodes before routing, so the space id
is captured as a ``path`` parameter and the more specific routes come first.
"""

from __future__ import annotations

from fastapi import APIRouter

from memoryd.models import Space, normalise_space_id, wire
from memoryd.server.responses import (
    ERROR_RESPONSES,
    MemoryOut,
    Object,
    SpaceList,
    SpaceStatus,
    Status,
)
from memoryd.server.schemas import (
    BatchShare,
    MemberIn,
    OrgPublish,
    OrgSetup,
    PullBody,
    ReshareBody,
    RoleUpdate,
    RuleCreate,
    ShareAll,
    ShareAllToUser,
    ShareBody,
    ShareToUser,
    SpaceCreate,
    SpaceUpdate,
    dump,
)
from memoryd.web.deps import Caller, memory_json, ok, space_json
from memoryd.web.errors import CompactJSON

router = APIRouter(tags=["spaces"], responses=ERROR_RESPONSES)
sharing_router = APIRouter(tags=["sharing"], responses=ERROR_RESPONSES)


# ---------------------------------------------------------------------- spaces
@router.get("/v1/spaces", response_model=SpaceList)
def list_spaces(svc: Caller) -> CompactJSON:
    """``{"spaces": [...]}``: the shape every ourmem client reads (reference §6.1)."""
    return ok({"spaces": [space_json(s) for s in svc.spaces.list_spaces()]})


@router.post("/v1/spaces", status_code=201, response_model=Space)
def create_space(body: SpaceCreate, svc: Caller) -> CompactJSON:
    members = [m.model_dump() for m in body.members or []]
    return ok(space_json(svc.spaces.create(body.name, body.space_type, members)), 201)


@router.post("/v1/spaces/{space_id:path}/members", response_model=Space)
def add_member(space_id: str, body: MemberIn, svc: Caller) -> CompactJSON:
    return ok(space_json(svc.spaces.add_member(space_id, body.user_id, body.role)))


@router.get("/v1/spaces/{space_id:path}/auto-share-rules", response_model=list[Object])
def list_rules(space_id: str, svc: Caller) -> CompactJSON:
    return ok([wire(r) for r in svc.spaces.rules(space_id)])


@router.post("/v1/spaces/{space_id:path}/auto-share-rules", status_code=201, response_model=Object)
def add_rule(space_id: str, body: RuleCreate, svc: Caller) -> CompactJSON:
    return ok(wire(svc.spaces.add_rule(space_id, **(dump(body) or {}))), 201)


@router.delete("/v1/spaces/{space_id:path}/auto-share-rules/{rule_id}", response_model=Status)
def delete_rule(space_id: str, rule_id: str, svc: Caller) -> CompactJSON:
    svc.spaces.delete_rule(space_id, rule_id)
    return ok({"status": "deleted"})


@router.put("/v1/spaces/{space_id:path}/members/{user_id}", response_model=Space)
def set_role(space_id: str, user_id: str, body: RoleUpdate, svc: Caller) -> CompactJSON:
    return ok(space_json(svc.spaces.set_role(space_id, user_id, body.role)))


@router.delete("/v1/spaces/{space_id:path}/members/{user_id}", response_model=Space)
def remove_member(space_id: str, user_id: str, svc: Caller) -> CompactJSON:
    return ok(space_json(svc.spaces.remove_member(space_id, user_id)))


@router.post("/v1/spaces/{space_id:path}/leave", response_model=SpaceStatus)
def leave_space(space_id: str, svc: Caller) -> CompactJSON:
    """Any member but the owner may leave; the space's memories leave their recall at once."""
    svc.spaces.leave(space_id)
    return ok({"status": "left", "space_id": normalise_space_id(space_id)})


@router.get("/v1/spaces/{space_id:path}", response_model=Space)
def get_space(space_id: str, svc: Caller) -> CompactJSON:
    return ok(space_json(svc.spaces.visible(space_id)))


@router.put("/v1/spaces/{space_id:path}", response_model=Space)
def rename_space(space_id: str, body: SpaceUpdate, svc: Caller) -> CompactJSON:
    return ok(space_json(svc.spaces.rename(space_id, body.name)))


@router.delete("/v1/spaces/{space_id:path}", response_model=Status)
def delete_space(space_id: str, svc: Caller) -> CompactJSON:
    svc.spaces.delete(space_id)
    return ok({"status": "deleted"})


# ---------------------------------------------------------------------- invitations
@router.get("/v1/invitations", response_model=Object)
def list_invitations(svc: Caller) -> CompactJSON:
    """The spaces the caller was added to and has not answered: none of them is searched."""
    return ok({"invitations": wire(svc.spaces.invitations())})


@router.post("/v1/invitations/{space_id:path}/accept", response_model=Space)
def accept_invitation(space_id: str, svc: Caller) -> CompactJSON:
    """Join: the space's memories reach the caller's search and context from now on."""
    return ok(space_json(svc.spaces.accept(space_id)))


@router.post("/v1/invitations/{space_id:path}/decline", response_model=SpaceStatus)
def decline_invitation(space_id: str, svc: Caller) -> CompactJSON:
    svc.spaces.decline(space_id)
    return ok({"status": "declined", "space_id": normalise_space_id(space_id)})


# ---------------------------------------------------------------------- sharing
@sharing_router.post("/v1/memories/batch-share", response_model=Object)
def batch_share(body: BatchShare, svc: Caller) -> CompactJSON:
    result = svc.sharing.batch_share(body.memory_ids, body.target_space)
    return ok({**result, "succeeded": [memory_json(m) for m in result["succeeded"]]})


@sharing_router.post("/v1/memories/share-all", response_model=Object)
def share_all(body: ShareAll, svc: Caller) -> CompactJSON:
    return ok(svc.sharing.share_all(body.target_space, dump(body.filters)))


@sharing_router.post("/v1/memories/share-all-to-user", response_model=Object)
def share_all_to_user(body: ShareAllToUser, svc: Caller) -> CompactJSON:
    return ok(svc.sharing.share_all_to_user(body.target_user, dump(body.filters)))


@sharing_router.post("/v1/memories/{memory_id}/share", status_code=201, response_model=MemoryOut)
def share(memory_id: str, body: ShareBody, svc: Caller) -> CompactJSON:
    """201 with the new copy; 200 with the existing copy when already shared there."""
    copy, created = svc.sharing.share(svc.expand_id(memory_id), body.target_space)
    return ok(memory_json(copy), 201 if created else 200)


@sharing_router.post("/v1/memories/{memory_id}/pull", status_code=201, response_model=MemoryOut)
def pull(memory_id: str, body: PullBody, svc: Caller) -> CompactJSON:
    copy = svc.sharing.pull(svc.expand_id(memory_id), body.source_space, body.visibility)
    return ok(memory_json(copy), 201)


@sharing_router.post("/v1/memories/{memory_id}/unshare", response_model=Status)
def unshare(memory_id: str, body: ShareBody, svc: Caller) -> CompactJSON:
    svc.sharing.unshare(svc.expand_id(memory_id), body.target_space)
    return ok({"status": "unshared"})


@sharing_router.post("/v1/memories/{memory_id}/reshare", response_model=MemoryOut)
def reshare(memory_id: str, svc: Caller, body: ReshareBody | None = None) -> CompactJSON:
    target = body.target_space if body is not None else None
    return ok(memory_json(svc.sharing.reshare(svc.expand_id(memory_id), target)))


@sharing_router.post(
    "/v1/memories/{memory_id}/share-to-user", status_code=201, response_model=Object
)
def share_to_user(memory_id: str, body: ShareToUser, svc: Caller) -> CompactJSON:
    result, created = svc.sharing.share_to_user(svc.expand_id(memory_id), body.target_user)
    return ok(result, 201 if created else 200)


@sharing_router.post("/v1/org/setup", status_code=201, response_model=Object)
def org_setup(body: OrgSetup, svc: Caller) -> CompactJSON:
    members = [m.model_dump() for m in body.members]
    return ok(svc.sharing.org_setup(body.name, members), 201)


@sharing_router.post("/v1/org/{org_id:path}/publish", response_model=Object)
def org_publish(org_id: str, svc: Caller, body: OrgPublish | None = None) -> CompactJSON:
    given = body or OrgPublish()
    return ok(svc.sharing.org_publish(org_id, given.memory_ids, dump(given.auto_share_rule)))
