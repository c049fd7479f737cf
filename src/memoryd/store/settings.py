"""Per-tenant settings documents and the metadata clients attach to memories."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from memoryd.models import utcnow
from memoryd.store.database import Database
from memoryd.store.rows import to_us


class SettingsStore(Database):
    """One JSON document per (tenant, name); one JSON object per memory."""

    def get_tenant_setting(self, tenant_id: str, name: str) -> dict[str, Any] | None:
        with self.read() as conn:
            row = conn.execute(
                "SELECT value FROM tenant_settings WHERE tenant_id = ? AND name = ?",
                (tenant_id, name),
            ).fetchone()
        if row is None:
            return None
        value: dict[str, Any] = json.loads(row[0])
        return value

    def put_tenant_setting(self, tenant_id: str, name: str, value: dict[str, Any]) -> None:
        with self.write() as conn:
            conn.execute(
                "INSERT INTO tenant_settings(tenant_id, name, value, updated_at) "
                "VALUES (?, ?, ?, ?) ON CONFLICT(tenant_id, name) DO UPDATE SET "
                "value = excluded.value, updated_at = excluded.updated_at",
                (tenant_id, name, json.dumps(value, ensure_ascii=False), to_us(utcnow())),
            )

    def put_memory_metadata(self, tenant_id: str, memory_id: str, value: dict[str, Any]) -> None:
        with self.write() as conn:
            conn.execute(
                "INSERT INTO memory_metadata(memory_id, tenant_id, value) VALUES (?, ?, ?) "
                "ON CONFLICT(memory_id) DO UPDATE SET value = excluded.value",
                (memory_id, tenant_id, json.dumps(value, ensure_ascii=False)),
            )

    def memory_metadata(self, tenant_id: str, memory_ids: Sequence[str]) -> dict[str, Any]:
        if not memory_ids:
            return {}
        marks = ",".join("?" * len(memory_ids))
        with self.read() as conn:
            rows = conn.execute(
                f"SELECT memory_id, value FROM memory_metadata WHERE tenant_id = ? "
                f"AND memory_id IN ({marks})",
                (tenant_id, *memory_ids),
            ).fetchall()
        return {r[0]: json.loads(r[1]) for r in rows}
