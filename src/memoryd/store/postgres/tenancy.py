"""Tenants, API keys, spaces, members, auto-share rules and sharing events on PostgreSQL.

The row shapes are those of the SQLite store (``store.spaces``, ``store.tenants``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import psycopg

from memoryd.errors import NotFoundError, ValidationError
from memoryd.models import (
    ApiKey,
    AutoShareRule,
    Member,
    MemberStatus,
    Role,
    Space,
    SpaceType,
    Tenant,
    new_id,
    utcnow,
)
from memoryd.store.postgres.database import Conn, PgDatabase
from memoryd.store.rows import from_us, to_us
from memoryd.store.spaces import SPACE_COLUMNS, _rule
from memoryd.store.tenants import _api_key

RULE_COLUMNS = "id, source_space, categories, tags, min_importance, require_approval, created_at"


class PgTenancy(PgDatabase):
    # ------------------------------------------------------------------ spaces
    def _insert_space(self, conn: Conn, space: Space) -> None:
        now = to_us(space.created_at)
        conn.execute(
            f"INSERT INTO spaces({SPACE_COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s)",
            (space.id, space.space_type.value, space.name, space.owner_id, now, now),
        )
        members = {space.owner_id: (Role.ADMIN, MemberStatus.ACTIVE)}
        for m in space.members:
            members.setdefault(m.user_id, (m.role, m.status))
        with conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO space_members(space_id, user_id, role, joined_at, status, "
                "invited_by) VALUES (%s, %s, %s, %s, %s, %s)",
                [
                    (
                        space.id,
                        user,
                        role.value,
                        now,
                        status.value,
                        None if status is MemberStatus.ACTIVE else space.owner_id,
                    )
                    for user, (role, status) in members.items()
                ],
            )

    def create_space(self, space: Space) -> Space:
        with self.write() as conn:
            self._insert_space(conn, space)
        return self.require_space(space.id)

    def get_space(self, space_id: str) -> Space | None:
        with self.read() as conn:
            row = conn.execute(
                f"SELECT {SPACE_COLUMNS} FROM spaces WHERE id = %s", (space_id,)
            ).fetchone()
            return None if row is None else self._space(conn, row)

    def require_space(self, space_id: str) -> Space:
        space = self.get_space(space_id)
        if space is None:
            raise NotFoundError(f"space {space_id}")
        return space

    def _space(self, conn: Conn, row: Sequence[Any]) -> Space:
        members = [
            Member(user_id=u, role=Role(r), joined_at=from_us(j), status=MemberStatus(st))
            for u, r, j, st in conn.execute(
                "SELECT user_id, role, joined_at, status FROM space_members WHERE space_id = %s "
                "ORDER BY joined_at, user_id",
                (row[0],),
            )
        ]
        rules = [
            _rule(r)
            for r in conn.execute(
                f"SELECT {RULE_COLUMNS} FROM auto_share_rules WHERE space_id = %s "
                "ORDER BY created_at, id",
                (row[0],),
            )
        ]
        return Space(
            id=row[0],
            space_type=SpaceType(row[1]),
            name=row[2],
            owner_id=row[3],
            members=members,
            auto_share_rules=rules,
            created_at=from_us(row[4]),
            updated_at=from_us(row[5]),
        )

    def spaces_of(self, user_id: str, status: MemberStatus = MemberStatus.ACTIVE) -> list[Space]:
        with self.read() as conn:
            rows = conn.execute(
                f"SELECT {', '.join('s.' + c.strip() for c in SPACE_COLUMNS.split(','))} "
                "FROM spaces s JOIN space_members sm ON sm.space_id = s.id "
                "WHERE sm.user_id = %s AND sm.status = %s "
                "ORDER BY s.space_type != 'personal', s.created_at, s.id",
                (user_id, status.value),
            ).fetchall()
            return [self._space(conn, r) for r in rows]

    def space_refs(self, user_id: str) -> list[tuple[str, SpaceType]]:
        rows = self.all(
            "SELECT s.id, s.space_type FROM spaces s JOIN space_members sm ON sm.space_id = s.id "
            "WHERE sm.user_id = %s AND sm.status = 'active' "
            "ORDER BY s.space_type != 'personal', s.created_at, s.id",
            (user_id,),
        )
        return [(r[0], SpaceType(r[1])) for r in rows]

    def is_member(self, user_id: str, space_id: str) -> bool:
        return (
            self.one(
                "SELECT 1 FROM space_members WHERE space_id = %s AND user_id = %s "
                "AND status = 'active'",
                (space_id, user_id),
            )
            is not None
        )

    def invited_by(self, space_id: str, user_id: str) -> str | None:
        row = self.one(
            "SELECT invited_by FROM space_members WHERE space_id = %s AND user_id = %s",
            (space_id, user_id),
        )
        return None if row is None else row[0]

    def live_memory_count(self, space_id: str) -> int:
        row = self.one(
            "SELECT COUNT(*) FROM memories WHERE space_id = %s AND state != 'deleted'", (space_id,)
        )
        return 0 if row is None else int(row[0])

    def rename_space(self, space_id: str, name: str) -> Space:
        with self.write() as conn:
            conn.execute(
                "UPDATE spaces SET name = %s, updated_at = %s WHERE id = %s",
                (name, to_us(utcnow()), space_id),
            )
        return self.require_space(space_id)

    def delete_space(self, space_id: str) -> None:
        with self.write() as conn:
            conn.execute("DELETE FROM spaces WHERE id = %s", (space_id,))

    def set_member(
        self, space_id: str, user_id: str, role: Role, *, new: bool, invited_by: str = ""
    ) -> Space:
        now = to_us(utcnow())
        try:
            with self.write() as conn:
                if new:
                    conn.execute(
                        "INSERT INTO space_members(space_id, user_id, role, joined_at, status, "
                        "invited_by) VALUES (%s, %s, %s, %s, 'invited', %s)",
                        (space_id, user_id, role.value, now, invited_by),
                    )
                elif (
                    conn.execute(
                        "UPDATE space_members SET role = %s WHERE space_id = %s AND user_id = %s",
                        (role.value, space_id, user_id),
                    ).rowcount
                    == 0
                ):
                    raise NotFoundError(f"member {user_id} of space {space_id}")
                conn.execute("UPDATE spaces SET updated_at = %s WHERE id = %s", (now, space_id))
        except psycopg.errors.UniqueViolation:
            raise ValidationError(
                f"{user_id} is already a member of {space_id}, or invited to it"
            ) from None
        return self.require_space(space_id)

    def accept_invitation(self, space_id: str, user_id: str) -> Space:
        now = to_us(utcnow())
        with self.write() as conn:
            if (
                conn.execute(
                    "UPDATE space_members SET status = 'active', joined_at = %s "
                    "WHERE space_id = %s AND user_id = %s AND status = 'invited'",
                    (now, space_id, user_id),
                ).rowcount
                == 0
            ):
                raise NotFoundError(f"invitation to space {space_id}")
            conn.execute("UPDATE spaces SET updated_at = %s WHERE id = %s", (now, space_id))
        return self.require_space(space_id)

    def remove_member(self, space_id: str, user_id: str) -> Space:
        with self.write() as conn:
            gone = conn.execute(
                "DELETE FROM space_members WHERE space_id = %s AND user_id = %s",
                (space_id, user_id),
            ).rowcount
            if gone == 0:
                raise NotFoundError(f"member {user_id} of space {space_id}")
            conn.execute(
                "UPDATE spaces SET updated_at = %s WHERE id = %s", (to_us(utcnow()), space_id)
            )
        return self.require_space(space_id)

    def find_pair_space(self, owner_id: str, name: str, other: str) -> Space | None:
        for (space_id,) in self.all(
            "SELECT id FROM spaces WHERE owner_id = %s AND name = %s AND space_type = 'team' "
            "ORDER BY created_at",
            (owner_id, name),
        ):
            space = self.require_space(space_id)
            if {m.user_id for m in space.members} <= {owner_id, other}:
                return space
        return None

    def shared_copy_id(self, space_id: str, original_id: str) -> str | None:
        row = self.one(
            "SELECT id FROM memories WHERE space_id = %s AND provenance IS NOT NULL AND "
            "provenance ->> 'shared_from_memory' = %s AND state != 'deleted' "
            "ORDER BY created_at DESC LIMIT 1",
            (space_id, original_id),
        )
        return None if row is None else str(row[0])

    # ------------------------------------------------------------------ auto-share rules
    def auto_share_rules(self, space_id: str) -> list[AutoShareRule]:
        rows = self.all(
            f"SELECT {RULE_COLUMNS} FROM auto_share_rules WHERE space_id = %s "
            "ORDER BY created_at, id",
            (space_id,),
        )
        return [_rule(r) for r in rows]

    def rules_from(self, source_space: str) -> list[tuple[str, AutoShareRule]]:
        rows = self.all(
            f"SELECT space_id, {RULE_COLUMNS} FROM auto_share_rules WHERE source_space = %s",
            (source_space,),
        )
        return [(r[0], _rule(r[1:])) for r in rows]

    def add_auto_share_rule(self, space_id: str, rule: AutoShareRule) -> AutoShareRule:
        with self.write() as conn:
            conn.execute(
                "INSERT INTO auto_share_rules(id, space_id, source_space, categories, tags, "
                "min_importance, require_approval, created_at) "
                "VALUES (%s, %s, %s, %s::jsonb, %s::jsonb, %s, %s, %s)",
                (
                    rule.id,
                    space_id,
                    rule.source_space,
                    json.dumps(rule.categories),
                    json.dumps(rule.tags),
                    rule.min_importance,
                    rule.require_approval,
                    to_us(rule.created_at),
                ),
            )
        return rule

    def delete_auto_share_rule(self, space_id: str, rule_id: str) -> None:
        with self.write() as conn:
            cursor = conn.execute(
                "DELETE FROM auto_share_rules WHERE id = %s AND space_id = %s", (rule_id, space_id)
            )
            if cursor.rowcount == 0:
                raise NotFoundError(f"auto-share rule {rule_id}")

    # ------------------------------------------------------------------ sharing events
    def add_sharing_event(self, conn: Conn, **event: Any) -> None:
        conn.execute(
            "INSERT INTO sharing_events(id, action, memory_id, from_space, to_space, user_id, "
            "agent_id, content_preview, at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
            (
                new_id(),
                event["action"],
                event["memory_id"],
                event["from_space"],
                event["to_space"],
                event["user_id"],
                event.get("agent_id") or "",
                event.get("content_preview", "")[:100],
                to_us(utcnow()),
            ),
        )

    def withdraw_previews(self, conn: Conn, memory_id: str, space_id: str) -> None:
        conn.execute(
            "UPDATE sharing_events SET content_preview = '' WHERE memory_id = %s AND to_space = %s",
            (memory_id, space_id),
        )

    def sharing_events(self, user_id: str, spaces: Sequence[str], since_us: int) -> list[Any]:
        return self.all(
            "SELECT id, action, memory_id, from_space, to_space, user_id, agent_id, "
            "content_preview, at FROM sharing_events WHERE at >= %s AND (user_id = %s OR "
            "from_space = ANY(%s) OR to_space = ANY(%s)) ORDER BY at DESC, id",
            (since_us, user_id, list(spaces), list(spaces)),
        )

    # ------------------------------------------------------------------ tenants
    def ensure_tenant(self, tenant_id: str, name: str, space_id: str) -> None:
        now = to_us(utcnow())
        with self.write() as conn:
            conn.execute(
                "INSERT INTO tenants(id, name, status, created_at) VALUES (%s, %s, 'active', %s) "
                "ON CONFLICT DO NOTHING",
                (tenant_id, name, now),
            )
            conn.execute(
                "INSERT INTO spaces(id, space_type, name, owner_id, created_at, updated_at) "
                "VALUES (%s, 'personal', %s, %s, %s, %s) ON CONFLICT DO NOTHING",
                (space_id, name, tenant_id, now, now),
            )
            conn.execute(
                "INSERT INTO space_members(space_id, user_id, role, joined_at) "
                "VALUES (%s, %s, 'admin', %s) ON CONFLICT DO NOTHING",
                (space_id, tenant_id, now),
            )

    def create_tenant(self, tenant: Tenant, personal_space_id: str) -> None:
        try:
            with self.write() as conn:
                conn.execute(
                    "INSERT INTO tenants(id, name, status, created_at) VALUES (%s, %s, %s, %s)",
                    (tenant.id, tenant.name, tenant.status, to_us(tenant.created_at)),
                )
                self._insert_space(
                    conn,
                    Space(
                        id=personal_space_id,
                        space_type=SpaceType.PERSONAL,
                        name=tenant.name,
                        owner_id=tenant.id,
                    ),
                )
        except psycopg.errors.UniqueViolation:
            raise ValidationError(f"tenant {tenant.id} already exists") from None

    def get_tenant(self, tenant_id: str) -> Tenant | None:
        row = self.one(
            "SELECT id, name, status, created_at FROM tenants WHERE id = %s", (tenant_id,)
        )
        if row is None:
            return None
        return Tenant(id=row[0], name=row[1], status=row[2], created_at=from_us(row[3]))

    def active_tenant_ids(self) -> list[str]:
        return [
            r[0] for r in self.all("SELECT id FROM tenants WHERE status = 'active' ORDER BY id")
        ]

    # ------------------------------------------------------------------ API keys
    def add_api_key(self, key: ApiKey, key_hash: str) -> None:
        with self.write() as conn:
            conn.execute(
                "INSERT INTO api_keys(id, tenant_id, key_hash, prefix, name, created_at) "
                "VALUES (%s, %s, %s, %s, %s, %s)",
                (key.id, key.tenant_id, key_hash, key.prefix, key.name, to_us(key.created_at)),
            )

    def find_api_key(self, key_hash: str) -> tuple[ApiKey, Tenant] | None:
        row = self.one(
            "SELECT k.id, k.tenant_id, k.prefix, k.name, k.created_at, k.revoked_at, "
            "k.last_used_at, t.name, t.status, t.created_at FROM api_keys k "
            "JOIN tenants t ON t.id = k.tenant_id WHERE k.key_hash = %s AND k.revoked_at IS NULL",
            (key_hash,),
        )
        if row is None:
            return None
        return _api_key(row[:7]), Tenant(
            id=row[1], name=row[7], status=row[8], created_at=from_us(row[9])
        )

    def touch_api_key(self, key_id: str) -> None:
        with self.write() as conn:
            conn.execute(
                "UPDATE api_keys SET last_used_at = %s WHERE id = %s", (to_us(utcnow()), key_id)
            )

    def list_api_keys(self, tenant_id: str) -> list[ApiKey]:
        rows = self.all(
            "SELECT id, tenant_id, prefix, name, created_at, revoked_at, last_used_at "
            "FROM api_keys WHERE tenant_id = %s ORDER BY created_at, id",
            (tenant_id,),
        )
        return [_api_key(r) for r in rows]

    def revoke_api_key(self, tenant_id: str, key_id: str) -> ApiKey:
        with self.write() as conn:
            cursor = conn.execute(
                "UPDATE api_keys SET revoked_at = COALESCE(revoked_at, %s) "
                "WHERE id = %s AND tenant_id = %s",
                (to_us(utcnow()), key_id, tenant_id),
            )
            if cursor.rowcount == 0:
                raise NotFoundError(f"api key {key_id}")
        return next(k for k in self.list_api_keys(tenant_id) if k.id == key_id)

    def count_api_keys(self) -> int:
        row = self.one("SELECT COUNT(*) FROM api_keys")
        return 0 if row is None else int(row[0])
