"""Sharing between spaces: copies with provenance, never moves (reference §4.17).

A share writes a copy of a memory into another space; the copy remembers
where it came from (``provenance``), so it can be refreshed (reshare), told
apart from the original (``check_stale``) and withdrawn (unshare). Every
share, pull, unshare and reshare is recorded as a sharing event.
"""

from __future__ import annotations

from functools import cached_property
from typing import Any

from memoryd.errors import MemorydError, NotFoundError, ValidationError
from memoryd.models import (
    Memory,
    Provenance,
    SpaceType,
    State,
    new_id,
    normalise_space_id,
    utcnow,
)
from memoryd.store import MemoryFilter
from memoryd.tenancy.scope import TenantScope
from memoryd.tenancy.spaces import Spaces
from memoryd.validate import check_id

MAX_BATCH_SHARE = 500
MAX_SHARE_ALL = 5000
VISIBILITIES = ("global", "private")


class Sharing(TenantScope):
    @cached_property
    def spaces(self) -> Spaces:
        return Spaces(self.engine, self.me)

    # ------------------------------------------------------------------ lookups
    def _in_space(self, memory_id: str, space_id: str) -> Memory:
        memory = self.store.get(self.me, [space_id], check_id(memory_id))
        if memory is None or memory.state is State.DELETED:
            raise NotFoundError(f"memory {memory_id}")
        return memory

    def _copy_in(self, space_id: str, original_id: str) -> Memory | None:
        """The live copy of ``original_id`` in ``space_id``, if one was shared there."""
        copy_id = self.store.shared_copy_id(space_id, original_id)
        return None if copy_id is None else self.store.get(self.me, [space_id], copy_id)

    def stale_info(self, memory: Memory) -> dict[str, Any] | None:
        """How a copy compares with its source, as far as the caller can see the source.

        A source in a space the caller does not belong to is not looked at
        (provenance can be written by an import, so it proves nothing): then
        whether the copy is stale is unknown, and says so with nulls.
        """
        if memory.provenance is None:
            return None
        p = memory.provenance
        source = self.store.get(self.me, self.readable_spaces(), p.shared_from_memory)
        if source is None:
            return {
                "is_stale": None,
                "source_version": p.source_version,
                "current_source_version": None,
                "source_deleted": None,
                "source_visible": False,
            }
        deleted = source.state is State.DELETED
        return {
            "is_stale": deleted or source.version != p.source_version,
            "source_version": p.source_version,
            "current_source_version": source.version,
            "source_deleted": deleted,
            "source_visible": True,
        }

    # ------------------------------------------------------------------ the copy
    def _write_copy(
        self, source: Memory, target_space: str, action: str, visibility: str = "global"
    ) -> Memory:
        now = utcnow()
        copy = source.model_copy(
            update={
                "id": new_id(),
                "space_id": target_space,
                "tenant_id": self.me,
                "visibility": visibility,
                # a space's copy is every member's: scopes are one owner's agents
                "scope": "global",
                "access_count": 0,
                "last_accessed_at": None,
                "version": 1,
                "created_at": now,
                "updated_at": now,
                "key": None,
                "provenance": Provenance(
                    shared_from_space=source.space_id,
                    shared_from_memory=source.id,
                    shared_by_user=self.me,
                    shared_by_agent=source.agent_id or "",
                    shared_at=now,
                    original_created_at=source.created_at,
                    source_version=source.version,
                ),
            }
        )
        vector = self.store.get_vector(source.id)
        with self.store.write() as conn:
            self.store.insert_memories([copy], [vector], actor=self.me, conn=conn)
            self.store.add_sharing_event(
                conn,
                action=action,
                memory_id=source.id,
                from_space=source.space_id,
                to_space=target_space,
                user_id=self.me,
                agent_id=source.agent_id,
                content_preview=source.content,
            )
        return copy

    # ------------------------------------------------------------------ one memory
    def share(self, memory_id: str, target_space: Any) -> tuple[Memory, bool]:
        """Copy a personal memory into a space; (copy, created). Idempotent per space."""
        source = self._in_space(memory_id, self.space_id)
        target = self.spaces.writable(_required(target_space, "target_space"))
        if target.id == source.space_id:
            raise ValidationError("the memory is already in that space")
        existing = self._copy_in(target.id, source.id)
        if existing is not None:
            return existing, False
        return self._write_copy(source, target.id, "share"), True

    def pull(self, memory_id: str, source_space: Any, visibility: Any = None) -> Memory:
        """Copy a memory of a space the caller belongs to into their personal space."""
        space = self.spaces.visible(_required(source_space, "source_space"))
        visibility = visibility or "private"
        if visibility not in VISIBILITIES:
            raise ValidationError(f"visibility must be one of {', '.join(VISIBILITIES)}")
        source = self._in_space(memory_id, space.id)
        return self._write_copy(source, self.space_id, "pull", visibility)

    def unshare(self, memory_id: str, target_space: Any) -> None:
        """Withdraw the copy of ``memory_id`` (the original's id) from a space."""
        target = self.spaces.visible(_required(target_space, "target_space"))
        copy = self._copy_in(target.id, check_id(memory_id))
        if copy is None or copy.provenance is None:
            raise NotFoundError(f"shared copy of memory {memory_id} in {target.id}")
        if copy.provenance.shared_by_user != self.me:
            self.spaces.administered(target.id)  # only the sharer or an admin
        with self.store.write() as conn:
            # withdrawn means gone: not even its first words stay readable in the events
            self.store.withdraw_previews(conn, memory_id, target.id)
            self.store.add_sharing_event(
                conn,
                action="unshare",
                memory_id=memory_id,
                from_space=copy.provenance.shared_from_space,
                to_space=target.id,
                user_id=self.me,
            )
        self.store.set_state_where(
            self.me, [target.id], MemoryFilter(ids=[copy.id]), State.DELETED, actor=self.me
        )

    def reshare(self, copy_id: str, target_space: Any = None) -> Memory:
        """Replace a stale copy with a fresh one from its source; the old copy is deleted."""
        copy = self._in_space(copy_id, self._space_of(copy_id))
        if copy.provenance is None:
            raise ValidationError("memory is not a shared copy")
        target = self.spaces.writable(
            normalise_space_id(target_space) if target_space else copy.space_id
        )
        source = self.store.get(self.me, self.readable_spaces(), copy.provenance.shared_from_memory)
        if source is None or source.state is State.DELETED:
            raise NotFoundError(f"source memory {copy.provenance.shared_from_memory}")
        fresh = self._write_copy(source, target.id, "reshare", copy.visibility)
        self.store.set_state_where(
            self.me, [copy.space_id], MemoryFilter(ids=[copy.id]), State.DELETED, actor=self.me
        )
        return fresh

    def _space_of(self, memory_id: str) -> str:
        return self.get(memory_id).space_id

    # ------------------------------------------------------------------ many memories
    def batch_share(self, memory_ids: Any, target_space: Any) -> dict[str, Any]:
        if not isinstance(memory_ids, list) or not 1 <= len(memory_ids) <= MAX_BATCH_SHARE:
            raise ValidationError(f"memory_ids must be a list of 1 to {MAX_BATCH_SHARE} ids")
        target = self.spaces.writable(_required(target_space, "target_space"))
        succeeded, failed = [], []
        for memory_id in memory_ids:
            try:
                succeeded.append(self.share(memory_id, target.id)[0])
            except MemorydError as exc:
                failed.append({"memory_id": memory_id, "error": exc.message})
        return {"succeeded": succeeded, "failed": failed}

    def share_all(self, target_space: Any, filters: dict[str, Any] | None = None) -> dict[str, int]:
        """Share every personal memory that matches ``filters`` (tags: any of them)."""
        target = self.spaces.writable(_required(target_space, "target_space"))
        return self._share_matching(target.id, filters)

    def _share_matching(self, target_id: str, filters: dict[str, Any] | None) -> dict[str, int]:
        f = filters or {}
        matches = [m for m in self._personal_memories() if _matches(m, f)]
        if len(matches) > MAX_SHARE_ALL:
            raise ValidationError(
                f"{len(matches)} memories match; share at most {MAX_SHARE_ALL} at once"
            )
        counts = {"total": len(matches), "shared": 0, "skipped_existing": 0, "failed": 0}
        for memory in matches:
            try:
                _, created = self.share(memory.id, target_id)
            except MemorydError:
                counts["failed"] += 1
                continue
            counts["shared" if created else "skipped_existing"] += 1
        return counts

    def _personal_memories(self) -> list[Memory]:
        rows, _ = self.store.list_memories(
            self.me,
            [self.space_id],
            MemoryFilter(state=[State.ACTIVE], exclude_types=()),
            limit=MAX_SHARE_ALL + 1,
        )
        return rows

    # ------------------------------------------------------------------ people
    def _pair_space(self, target_user: Any) -> tuple[str, bool]:
        """The caller's two-person space with ``target_user`` (who is invited to it, and
        invited again after declining or leaving: a new share asks again)."""
        if not isinstance(target_user, str) or not target_user.strip():
            raise ValidationError("target_user is required")
        other = target_user.strip()
        if other == self.me:
            raise ValidationError("target_user must be someone else")
        if self.store.get_tenant(other) is None:
            raise NotFoundError(f"tenant {other}")
        name = f"shared-{self.me[:8]}-{other[:8]}"
        space = self.store.find_pair_space(self.me, name, other)
        if space is not None:
            if space.member(other) is None:
                self.spaces.add_member(space.id, other, "member")
            return space.id, False
        created = self.spaces.create(name, "team", [{"user_id": other, "role": "member"}])
        return created.id, True

    def share_to_user(self, memory_id: str, target_user: Any) -> tuple[dict[str, Any], bool]:
        self._in_space(memory_id, self.space_id)
        space_id, space_created = self._pair_space(target_user)
        copy, created = self.share(memory_id, space_id)
        return {
            "space_id": space_id,
            "shared_copy_id": copy.id,
            "space_created": space_created,
        }, created

    def share_all_to_user(self, target_user: Any, filters: Any = None) -> dict[str, Any]:
        space_id, space_created = self._pair_space(target_user)
        counts = self._share_matching(space_id, filters)
        return {"space_id": space_id, "space_created": space_created, **counts}

    # ------------------------------------------------------------------ organizations
    def org_setup(self, name: Any, members: Any) -> dict[str, Any]:
        if not isinstance(members, list):
            raise ValidationError("members must be a list of {user_id, role}")
        space = self.spaces.create(name, "organization")
        added, failed = 0, []
        for m in members:
            user = m.get("user_id") if isinstance(m, dict) else None
            try:
                if user == self.me:
                    raise ValidationError("the caller is already the owner")
                self.spaces.add_member(space.id, user, m.get("role", "member"))
                added += 1
            except MemorydError:
                failed.append(str(user))
        return {
            "space_id": space.id,
            "name": space.name,
            "members_added": added,
            "failed_members": failed,
        }

    def org_publish(
        self, org_id: str, memory_ids: Any = None, auto_share_rule: Any = None
    ) -> dict[str, Any]:
        space = self.spaces.administered(org_id)
        if space.space_type is not SpaceType.ORGANIZATION:
            raise ValidationError(f"{space.id} is not an organization space")
        ids = memory_ids or []
        if not isinstance(ids, list) or len(ids) > MAX_BATCH_SHARE:
            raise ValidationError(f"memory_ids must be a list of at most {MAX_BATCH_SHARE} ids")
        counts = {"published": 0, "skipped_existing": 0, "failed": 0}
        for memory_id in ids:
            try:
                _, created = self.share(memory_id, space.id)
            except MemorydError:
                counts["failed"] += 1
                continue
            counts["published" if created else "skipped_existing"] += 1
        rule_id = None
        if auto_share_rule is not None:
            if not isinstance(auto_share_rule, dict):
                raise ValidationError("auto_share_rule must be an object")
            rule = self.spaces.add_rule(space.id, source_space=self.space_id, **auto_share_rule)
            rule_id = rule.id
        return {**counts, "auto_share_rule_id": rule_id}

    # ------------------------------------------------------------------ auto-share
    def apply_auto_share(self, memory: Memory) -> list[Memory]:
        """Copy a new memory into every space whose rules watch its space and match it.

        Rules that require approval are not applied: there is no approval
        queue yet, and sharing without the approval the rule asks for would
        be worse than not sharing.
        """
        copies = []
        for target, rule in self.store.rules_from(memory.space_id):
            if rule.require_approval or not self.store.is_member(self.me, target):
                continue
            wanted = {"categories": rule.categories, "min_importance": rule.min_importance}
            if rule.tags:
                wanted["tags"] = rule.tags
            if _matches(memory, wanted) and self._copy_in(target, memory.id) is None:
                copies.append(self._write_copy(memory, target, "auto_share"))
        return copies


def _required(value: Any, name: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValidationError(f"{name} is required")
    return normalise_space_id(value.strip())


def _matches(memory: Memory, f: dict[str, Any]) -> bool:
    categories = f.get("categories") or []
    tags = f.get("tags") or []
    min_importance = f.get("min_importance") or 0.0
    if categories and memory.category.value not in categories:
        return False
    if tags and not set(tags) & set(memory.tags):
        return False
    return memory.importance >= float(min_importance)
