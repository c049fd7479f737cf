"""The raw record beside the memories: session messages and the embedding cache."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from memoryd.models import utcnow
from memoryd.store.database import Database
from memoryd.store.rows import to_us

# an export reads messages and history a page at a time, keyed by id: its memory stays
# the same whatever the space holds (both backends; PostgreSQL's placeholders as written)
EXPORT_BATCH = 1000
MESSAGE_KEYS = ("session_id", "agent_id", "role", "content", "said_at", "stored_at", "memory_id")
MESSAGE_PAGE = (
    "SELECT id, session_id, agent_id, role, content, said_at, stored_at, memory_id "
    "FROM session_messages WHERE tenant_id = %s AND space_id = %s AND id > %s "
    "ORDER BY id LIMIT %s"
)


@dataclass(frozen=True)
class RawMessage:
    """One message as said, before anything smart happens (times in microseconds)."""

    role: str
    content: str
    digest: str
    said_at: int | None = None
    memory_id: str | None = None
    stored_at: int | None = None


class SessionLog(Database):
    """Verbatim messages per session, and vectors cached by content hash."""

    # ------------------------------------------------------------------ session messages
    def add_session_messages(
        self,
        conn: sqlite3.Connection,
        tenant_id: str,
        space_id: str,
        session_id: str,
        agent_id: str | None,
        messages: Sequence[RawMessage],
    ) -> list[bool]:
        """Store raw messages; False marks a repeat already in the session."""
        now = to_us(utcnow())
        fresh = []
        for m in messages:
            cursor = conn.execute(
                "INSERT OR IGNORE INTO session_messages(tenant_id, space_id, session_id, "
                "agent_id, role, content, msg_hash, said_at, stored_at, memory_id) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    tenant_id,
                    space_id,
                    session_id,
                    agent_id,
                    m.role,
                    m.content,
                    m.digest,
                    m.said_at,
                    m.stored_at if m.stored_at is not None else now,
                    m.memory_id,
                ),
            )
            fresh.append(cursor.rowcount == 1)
        return fresh

    def recent_hashes(
        self, tenant_id: str, space_id: str, digests: Sequence[str], since_us: int
    ) -> set[str]:
        """Which of these message hashes the space stored since ``since_us`` (any session)."""
        found: set[str] = set()
        unique = list(dict.fromkeys(digests))
        for start in range(0, len(unique), 500):
            chunk = unique[start : start + 500]
            marks = ", ".join("?" for _ in chunk)
            found.update(
                r[0]
                for r in self.conn.execute(
                    "SELECT msg_hash FROM session_messages WHERE space_id = ? AND tenant_id = ? "
                    f"AND msg_hash IN ({marks}) AND stored_at >= ?",
                    (space_id, tenant_id, *chunk, since_us),
                )
            )
        return found

    def session_messages(
        self, tenant_id: str, space_id: str, session_id: str | None = None
    ) -> list[dict[str, Any]]:
        sql = (
            "SELECT session_id, agent_id, role, content, said_at, stored_at, memory_id "
            "FROM session_messages WHERE tenant_id = ? AND space_id = ?"
        )
        params: list[Any] = [tenant_id, space_id]
        if session_id is not None:
            sql += " AND session_id = ?"
            params.append(session_id)
        rows = self.conn.execute(sql + " ORDER BY id", params).fetchall()
        keys = ("session_id", "agent_id", "role", "content", "said_at", "stored_at", "memory_id")
        return [dict(zip(keys, r, strict=True)) for r in rows]

    def iter_session_messages(
        self, tenant_id: str, space_id: str, batch: int = EXPORT_BATCH
    ) -> Iterator[dict[str, Any]]:
        """Every raw message of a space, oldest first, read a batch at a time (export)."""
        last = 0
        while True:
            rows = self.conn.execute(
                MESSAGE_PAGE.replace("%s", "?"), (tenant_id, space_id, last, batch)
            ).fetchall()
            yield from (dict(zip(MESSAGE_KEYS, r[1:], strict=True)) for r in rows)
            if len(rows) < batch:
                return
            last = rows[-1][0]

    def list_sessions(
        self, tenant_id: str, space_id: str, limit: int, offset: int = 0
    ) -> tuple[list[dict[str, Any]], int]:
        """The conversations of a space, latest first: id, agent, turns, first and last time."""
        where = "tenant_id = ? AND space_id = ?"
        total = self.conn.execute(
            f"SELECT COUNT(DISTINCT session_id) FROM session_messages WHERE {where}",
            (tenant_id, space_id),
        ).fetchone()[0]
        rows = self.conn.execute(
            "SELECT session_id, MAX(agent_id), COUNT(*), MIN(COALESCE(said_at, stored_at)), "
            "MAX(COALESCE(said_at, stored_at)) "
            f"FROM session_messages WHERE {where} GROUP BY session_id "
            "ORDER BY MAX(id) DESC LIMIT ? OFFSET ?",
            (tenant_id, space_id, limit, offset),
        ).fetchall()
        keys = ("session_id", "agent_id", "turns", "first_said_at", "last_said_at")
        return [dict(zip(keys, r, strict=True)) for r in rows], int(total)

    def last_session_line(self, tenant_id: str, space_id: str, session_id: str) -> str | None:
        """The latest stored turn of a session as a transcript line, for context."""
        row = self.conn.execute(
            "SELECT role, content FROM session_messages WHERE tenant_id = ? AND space_id = ? "
            "AND session_id = ? ORDER BY id DESC LIMIT 1",
            (tenant_id, space_id, session_id),
        ).fetchone()
        return None if row is None else f"{row[0]}: {row[1]}"

    def clear_sessions(self, conn: sqlite3.Connection, tenant_id: str, space_id: str) -> int:
        cursor = conn.execute(
            "DELETE FROM session_messages WHERE tenant_id = ? AND space_id = ?",
            (tenant_id, space_id),
        )
        return int(cursor.rowcount)

    # ------------------------------------------------------------------ embedding cache
    def cached_vectors(self, model: str, hashes: Sequence[bytes]) -> dict[bytes, bytes]:
        out: dict[bytes, bytes] = {}
        for start in range(0, len(hashes), 500):
            chunk = hashes[start : start + 500]
            marks = ", ".join("?" for _ in chunk)
            out.update(
                self.conn.execute(
                    f"SELECT hash, vector FROM embed_cache WHERE model = ? AND hash IN ({marks})",
                    (model, *chunk),
                ).fetchall()
            )
        return out

    def cache_vectors(self, model: str, items: Sequence[tuple[bytes, bytes]]) -> None:
        if items:
            with self.write() as conn:
                conn.executemany(
                    "INSERT OR IGNORE INTO embed_cache(model, hash, vector) VALUES (?, ?, ?)",
                    [(model, h, v) for h, v in items],
                )
