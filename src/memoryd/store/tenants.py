"""Tenants and their API keys.

Keys are stored as SHA-256 digests of high-entropy secrets: the secret is
shown once when the key is made and cannot be read back from the database.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from memoryd.errors import NotFoundError, ValidationError
from memoryd.models import ApiKey, Space, SpaceType, Tenant, utcnow
from memoryd.store.rows import from_us, to_us
from memoryd.store.spaces import SpaceStore


class TenantStore(SpaceStore):
    """A tenant comes with its personal space, so tenants build on spaces."""

    def ensure_tenant(self, tenant_id: str, name: str, space_id: str) -> None:
        now = to_us(utcnow())
        with self.write() as conn:
            conn.execute(
                "INSERT OR IGNORE INTO tenants(id, name, status, created_at) "
                "VALUES (?, ?, 'active', ?)",
                (tenant_id, name, now),
            )
            conn.execute(
                "INSERT OR IGNORE INTO spaces(id, space_type, name, owner_id, created_at, "
                "updated_at) VALUES (?, 'personal', ?, ?, ?, ?)",
                (space_id, name, tenant_id, now, now),
            )
            conn.execute(
                "INSERT OR IGNORE INTO space_members(space_id, user_id, role, joined_at) "
                "VALUES (?, ?, 'admin', ?)",
                (space_id, tenant_id, now),
            )

    def create_tenant(self, tenant: Tenant, personal_space_id: str) -> None:
        with self.write() as conn:
            try:
                conn.execute(
                    "INSERT INTO tenants(id, name, status, created_at) VALUES (?, ?, ?, ?)",
                    (tenant.id, tenant.name, tenant.status, to_us(tenant.created_at)),
                )
            except sqlite3.IntegrityError:
                raise ValidationError(f"tenant {tenant.id} already exists") from None
            self._insert_space(
                conn,
                Space(
                    id=personal_space_id,
                    space_type=SpaceType.PERSONAL,
                    name=tenant.name,
                    owner_id=tenant.id,
                ),
            )

    def get_tenant(self, tenant_id: str) -> Tenant | None:
        row = self.conn.execute(
            "SELECT id, name, status, created_at FROM tenants WHERE id = ?", (tenant_id,)
        ).fetchone()
        if row is None:
            return None
        return Tenant(id=row[0], name=row[1], status=row[2], created_at=from_us(row[3]))

    def active_tenant_ids(self) -> list[str]:
        """Every active tenant (a scheduled job visits each)."""
        rows = self.conn.execute("SELECT id FROM tenants WHERE status = 'active' ORDER BY id")
        return [r[0] for r in rows.fetchall()]

    # ------------------------------------------------------------------ API keys
    def add_api_key(self, key: ApiKey, key_hash: str) -> None:
        with self.write() as conn:
            conn.execute(
                "INSERT INTO api_keys(id, tenant_id, key_hash, prefix, name, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (key.id, key.tenant_id, key_hash, key.prefix, key.name, to_us(key.created_at)),
            )

    def find_api_key(self, key_hash: str) -> tuple[ApiKey, Tenant] | None:
        """The live key with this digest and its tenant, or None; records the use."""
        row = self.conn.execute(
            "SELECT k.id, k.tenant_id, k.prefix, k.name, k.created_at, k.revoked_at, "
            "k.last_used_at, t.name, t.status, t.created_at FROM api_keys k "
            "JOIN tenants t ON t.id = k.tenant_id WHERE k.key_hash = ? AND k.revoked_at IS NULL",
            (key_hash,),
        ).fetchone()
        if row is None:
            return None
        return _api_key(row[:7]), Tenant(
            id=row[1], name=row[7], status=row[8], created_at=from_us(row[9])
        )

    def touch_api_key(self, key_id: str) -> None:
        with self.write() as conn:
            conn.execute(
                "UPDATE api_keys SET last_used_at = ? WHERE id = ?", (to_us(utcnow()), key_id)
            )

    def list_api_keys(self, tenant_id: str) -> list[ApiKey]:
        rows = self.conn.execute(
            "SELECT id, tenant_id, prefix, name, created_at, revoked_at, last_used_at "
            "FROM api_keys WHERE tenant_id = ? ORDER BY created_at, id",
            (tenant_id,),
        ).fetchall()
        return [_api_key(r) for r in rows]

    def revoke_api_key(self, tenant_id: str, key_id: str) -> ApiKey:
        with self.write() as conn:
            cursor = conn.execute(
                "UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?) "
                "WHERE id = ? AND tenant_id = ?",
                (to_us(utcnow()), key_id, tenant_id),
            )
            if cursor.rowcount == 0:
                raise NotFoundError(f"api key {key_id}")
        return next(k for k in self.list_api_keys(tenant_id) if k.id == key_id)

    def count_api_keys(self) -> int:
        return int(self.conn.execute("SELECT COUNT(*) FROM api_keys").fetchone()[0])


def _api_key(row: Sequence[Any]) -> ApiKey:
    return ApiKey(
        id=row[0],
        tenant_id=row[1],
        prefix=row[2],
        name=row[3],
        created_at=from_us(row[4]),
        revoked_at=from_us(row[5]),
        last_used_at=from_us(row[6]),
    )
