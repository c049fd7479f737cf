"""Spaces (personal, team, organization), their members and auto-share rules.

Who may do what (seed 000 and reference §4.16): any member reads a space;
admins (the owner is always one) rename or delete it and manage members and
rules. A space the caller does not belong to answers 404, as if it did not
exist; a member without the role answers 403.

Nobody is put into a space without consent. Whoever an admin adds (members
at creation, share-to-user, org setup) is invited: the space's memories
reach their recall only once they accept. They may decline, and any member
but the owner may leave at any time. A space's memories are what an agent
reads as background before it acts, so who may write into someone's recall
is theirs to decide.
"""

from __future__ import annotations

from typing import Any

from memoryd.errors import ForbiddenError, NotFoundError, ValidationError
from memoryd.models import (
    AutoShareRule,
    Member,
    MemberStatus,
    Role,
    Space,
    SpaceType,
    State,
    new_id,
    normalise_space_id,
    utcnow,
)
from memoryd.store import MemoryFilter
from memoryd.tenancy.scope import TenantScope
from memoryd.tenancy.tenants import check_name

MAX_SPACES_PER_USER = 20
MAX_MEMBERS_PER_TEAM = 50
SPACE_PREFIXES = {
    SpaceType.PERSONAL: "personal",
    SpaceType.TEAM: "team",
    SpaceType.ORGANIZATION: "org",
}


def parse_role(value: Any) -> Role:
    try:
        return Role(str(value).strip().lower())
    except ValueError:
        raise ValidationError(f"unknown role: {value} (expected admin, member or reader)") from None


def parse_space_type(value: Any) -> SpaceType:
    try:
        return SpaceType(str(value).strip().lower())
    except ValueError:
        raise ValidationError(
            f"unknown space type: {value} (expected team or organization)"
        ) from None


class Spaces(TenantScope):
    # ------------------------------------------------------------------ access
    def visible(self, space_id: str) -> Space:
        """The space if the caller belongs to it; otherwise it does not exist for them."""
        space = self.store.get_space(normalise_space_id(space_id))
        if space is None or space.role_of(self.me) is None:
            raise NotFoundError(f"space {space_id}")
        return space

    def administered(self, space_id: str) -> Space:
        space = self.visible(space_id)
        if space.role_of(self.me) is not Role.ADMIN:
            raise ForbiddenError(f"only an admin of {space.id} may do this")
        return space

    def writable(self, space_id: str) -> Space:
        space = self.visible(space_id)
        if space.role_of(self.me) is Role.READER:
            raise ForbiddenError(f"read-only access to target space {space.id}")
        return space

    # ------------------------------------------------------------------ spaces
    def create(
        self, name: Any, space_type: Any, members: list[dict[str, Any]] | None = None
    ) -> Space:
        name = check_name(name)
        if not name:
            raise ValidationError("space name cannot be empty")
        kind = parse_space_type(space_type)
        if kind is SpaceType.PERSONAL:
            raise ValidationError("every tenant has exactly one personal space; create a team")
        self._room_for_one_more()
        now = utcnow()
        entries = [
            Member(
                user_id=self._user(m.get("user_id")),
                role=parse_role(m.get("role")),
                joined_at=now,
                status=MemberStatus.INVITED,
            )
            for m in members or []
        ]
        entries = [m for m in entries if m.user_id != self.me]
        if len(entries) + 1 > MAX_MEMBERS_PER_TEAM:
            raise ValidationError(f"a space may have at most {MAX_MEMBERS_PER_TEAM} members")
        return self.store.create_space(
            Space(
                id=f"{SPACE_PREFIXES[kind]}/{new_id()}",
                space_type=kind,
                name=name,
                owner_id=self.me,
                members=entries,
                created_at=now,
                updated_at=now,
            )
        )

    def list_spaces(self) -> list[Space]:
        return self.store.spaces_of(self.me)

    def _room_for_one_more(self) -> None:
        if len(self.store.space_refs(self.me)) >= MAX_SPACES_PER_USER:
            raise ValidationError(
                f"a tenant may belong to at most {MAX_SPACES_PER_USER} spaces (its personal "
                "one included); leave or delete one first"
            )

    def rename(self, space_id: str, name: Any) -> Space:
        space = self.administered(space_id)
        if name is None:
            return space
        name = check_name(name)
        if not name:
            raise ValidationError("space name cannot be empty")
        return self.store.rename_space(space.id, name)

    def delete(self, space_id: str) -> None:
        space = self.administered(space_id)
        if space.space_type is SpaceType.PERSONAL:
            raise ValidationError("a personal space cannot be deleted")
        # soft delete with history, as every other deletion; the rows stay for the record
        everything = MemoryFilter(exclude_types=())
        self.store.set_state_where(self.me, [space.id], everything, State.DELETED, actor=self.me)
        self.store.delete_space(space.id)

    # ------------------------------------------------------------------ members
    def _user(self, user_id: Any) -> str:
        if not isinstance(user_id, str) or not user_id.strip():
            raise ValidationError("user_id must be a non-empty string")
        if self.store.get_tenant(user_id.strip()) is None:
            raise NotFoundError(f"tenant {user_id}")
        return user_id.strip()

    def add_member(self, space_id: str, user_id: Any, role: Any) -> Space:
        """Invite a user in with ``role``; they become a member when they accept."""
        space = self.administered(space_id)
        if space.space_type is SpaceType.PERSONAL:
            raise ValidationError("a personal space has no other members; share to a team")
        parsed = parse_role(role)
        user = self._user(user_id)
        if len(space.members) >= MAX_MEMBERS_PER_TEAM:  # invitations count: they may accept
            raise ValidationError(f"a space may have at most {MAX_MEMBERS_PER_TEAM} members")
        return self.store.set_member(space.id, user, parsed, new=True, invited_by=self.me)

    def set_role(self, space_id: str, user_id: str, role: Any) -> Space:
        space = self.administered(space_id)
        parsed = parse_role(role)
        if user_id == space.owner_id:
            raise ValidationError("the owner's role cannot be changed")
        return self.store.set_member(space.id, user_id, parsed, new=False)

    def remove_member(self, space_id: str, user_id: str) -> Space:
        """Remove a member, or withdraw an invitation."""
        space = self.administered(space_id)
        if user_id == space.owner_id:
            raise ValidationError("the owner cannot be removed from a space")
        return self.store.remove_member(space.id, user_id)

    # ------------------------------------------------------------------ consent
    def invitations(self) -> list[dict[str, Any]]:
        """The spaces the caller is invited to and has not answered, oldest first."""
        out = []
        for space in self.store.spaces_of(self.me, MemberStatus.INVITED):
            member = space.member(self.me)
            assert member is not None
            out.append(
                {
                    "space_id": space.id,
                    "space_type": space.space_type.value,
                    "name": space.name,
                    "owner_id": space.owner_id,
                    "invited_by": self.store.invited_by(space.id, self.me) or space.owner_id,
                    "role": member.role.value,
                    "invited_at": member.joined_at,
                    "memory_count": self.store.live_memory_count(space.id),
                }
            )
        return sorted(out, key=lambda i: i["invited_at"])

    def _invitation(self, space_id: str) -> Space:
        space = self.store.get_space(normalise_space_id(space_id))
        member = None if space is None else space.member(self.me)
        if space is None or member is None or member.status is not MemberStatus.INVITED:
            raise NotFoundError(f"invitation to space {space_id}")
        return space

    def accept(self, space_id: str) -> Space:
        """Join a space one was invited to; its memories reach one's recall from now on."""
        space = self._invitation(space_id)
        self._room_for_one_more()
        return self.store.accept_invitation(space.id, self.me)

    def decline(self, space_id: str) -> None:
        """Say no to an invitation: the space never reaches one's recall."""
        self.store.remove_member(self._invitation(space_id).id, self.me)

    def leave(self, space_id: str) -> None:
        """Stop being a member: the space's memories leave one's recall at once."""
        space = self.visible(space_id)
        if space.space_type is SpaceType.PERSONAL:
            raise ValidationError("a tenant cannot leave its personal space")
        if space.owner_id == self.me:
            raise ValidationError(f"the owner cannot leave {space.id}; delete the space instead")
        self.store.remove_member(space.id, self.me)

    # ------------------------------------------------------------------ auto-share rules
    def rules(self, space_id: str) -> list[AutoShareRule]:
        return self.store.auto_share_rules(self.visible(space_id).id)

    def add_rule(self, space_id: str, **fields: Any) -> AutoShareRule:
        space = self.administered(space_id)
        source = fields.get("source_space")
        if not isinstance(source, str) or not source.strip():
            raise ValidationError("source_space is required")
        source_space = self.visible(source)  # only a space the caller can read feeds a rule
        if source_space.id == space.id:
            raise ValidationError("a rule cannot share a space into itself")
        importance = fields.get("min_importance") or 0.0
        if not 0.0 <= float(importance) <= 1.0:
            raise ValidationError("min_importance must be between 0 and 1")
        rule = AutoShareRule(
            source_space=source_space.id,
            categories=list(fields.get("categories") or []),
            tags=list(fields.get("tags") or []),
            min_importance=float(importance),
            require_approval=bool(fields.get("require_approval") or False),
        )
        return self.store.add_auto_share_rule(space.id, rule)

    def delete_rule(self, space_id: str, rule_id: str) -> None:
        self.store.delete_auto_share_rule(self.administered(space_id).id, rule_id)
