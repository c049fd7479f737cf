"""Spaces, their members, auto-share rules and sharing events."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any

from memoryd.errors import NotFoundError, ValidationError
from memoryd.models import (
    AutoShareRule,
    Member,
    MemberStatus,
    Role,
    Space,
    SpaceType,
    new_id,
    utcnow,
)
from memoryd.store.database import Database
from memoryd.store.rows import from_us, to_us

SPACE_COLUMNS = "id, space_type, name, owner_id, created_at, updated_at"


class SpaceStore(Database):
    # ------------------------------------------------------------------ spaces
    def _insert_space(self, conn: sqlite3.Connection, space: Space) -> None:
        now = to_us(space.created_at)
        conn.execute(
            f"INSERT INTO spaces({SPACE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)",
            (space.id, space.space_type.value, space.name, space.owner_id, now, now),
        )
        members = {space.owner_id: (Role.ADMIN, MemberStatus.ACTIVE)}
        for m in space.members:
            members.setdefault(m.user_id, (m.role, m.status))
        conn.executemany(
            "INSERT INTO space_members(space_id, user_id, role, joined_at, status, invited_by) "
            "VALUES (?, ?, ?, ?, ?, ?)",
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
        row = self.conn.execute(
            f"SELECT {SPACE_COLUMNS} FROM spaces WHERE id = ?", (space_id,)
        ).fetchone()
        return None if row is None else self._space(row)

    def require_space(self, space_id: str) -> Space:
        space = self.get_space(space_id)
        if space is None:
            raise NotFoundError(f"space {space_id}")
        return space

    def _space(self, row: Sequence[Any]) -> Space:
        members = [
            Member(user_id=u, role=Role(r), joined_at=from_us(j), status=MemberStatus(st))
            for u, r, j, st in self.conn.execute(
                "SELECT user_id, role, joined_at, status FROM space_members WHERE space_id = ? "
                "ORDER BY joined_at, user_id",
                (row[0],),
            )
        ]
        return Space(
            id=row[0],
            space_type=SpaceType(row[1]),
            name=row[2],
            owner_id=row[3],
            members=members,
            auto_share_rules=self.auto_share_rules(row[0]),
            created_at=from_us(row[4]),
            updated_at=from_us(row[5]),
        )

    def spaces_of(self, user_id: str, status: MemberStatus = MemberStatus.ACTIVE) -> list[Space]:
        """Every space the user belongs to (or, ``invited``, is invited to), personal first."""
        rows = self.conn.execute(
            f"SELECT {', '.join('s.' + c.strip() for c in SPACE_COLUMNS.split(','))} "
            "FROM spaces s JOIN space_members sm ON sm.space_id = s.id "
            "WHERE sm.user_id = ? AND sm.status = ? "
            "ORDER BY s.space_type != 'personal', s.created_at, s.id",
            (user_id, status.value),
        ).fetchall()
        return [self._space(r) for r in rows]

    def space_refs(self, user_id: str) -> list[tuple[str, SpaceType]]:
        """(id, type) of every space the user belongs to, the personal one first: for search."""
        rows = self.conn.execute(
            "SELECT s.id, s.space_type FROM spaces s JOIN space_members sm ON sm.space_id = s.id "
            "WHERE sm.user_id = ? AND sm.status = 'active' "
            "ORDER BY s.space_type != 'personal', s.created_at, s.id",
            (user_id,),
        ).fetchall()
        return [(r[0], SpaceType(r[1])) for r in rows]

    def is_member(self, user_id: str, space_id: str) -> bool:
        """An active member: an invitation not yet accepted is not membership."""
        return (
            self.conn.execute(
                "SELECT 1 FROM space_members WHERE space_id = ? AND user_id = ? "
                "AND status = 'active'",
                (space_id, user_id),
            ).fetchone()
            is not None
        )

    def invited_by(self, space_id: str, user_id: str) -> str | None:
        row = self.conn.execute(
            "SELECT invited_by FROM space_members WHERE space_id = ? AND user_id = ?",
            (space_id, user_id),
        ).fetchone()
        return None if row is None else row[0]

    def live_memory_count(self, space_id: str) -> int:
        """Memories a space holds, for an invitation (the invitee cannot list them yet)."""
        row = self.conn.execute(
            "SELECT COUNT(*) FROM memories WHERE space_id = ? AND state != 'deleted'",
            (space_id,),
        ).fetchone()
        return int(row[0])

    def rename_space(self, space_id: str, name: str) -> Space:
        with self.write() as conn:
            conn.execute(
                "UPDATE spaces SET name = ?, updated_at = ? WHERE id = ?",
                (name, to_us(utcnow()), space_id),
            )
        return self.require_space(space_id)

    def delete_space(self, space_id: str) -> None:
        """Remove the space with its members and rules (its memories are soft-deleted first)."""
        with self.write() as conn:
            conn.execute("DELETE FROM spaces WHERE id = ?", (space_id,))

    def set_member(
        self, space_id: str, user_id: str, role: Role, *, new: bool, invited_by: str = ""
    ) -> Space:
        """Change a member's role, or (``new``) invite the user in with that role."""
        now = to_us(utcnow())
        with self.write() as conn:
            if new:
                try:
                    conn.execute(
                        "INSERT INTO space_members(space_id, user_id, role, joined_at, status, "
                        "invited_by) VALUES (?, ?, ?, ?, 'invited', ?)",
                        (space_id, user_id, role.value, now, invited_by),
                    )
                except sqlite3.IntegrityError:
                    raise ValidationError(
                        f"{user_id} is already a member of {space_id}, or invited to it"
                    ) from None
            elif (
                conn.execute(
                    "UPDATE space_members SET role = ? WHERE space_id = ? AND user_id = ?",
                    (role.value, space_id, user_id),
                ).rowcount
                == 0
            ):
                raise NotFoundError(f"member {user_id} of space {space_id}")
            conn.execute("UPDATE spaces SET updated_at = ? WHERE id = ?", (now, space_id))
        return self.require_space(space_id)

    def accept_invitation(self, space_id: str, user_id: str) -> Space:
        """The invited user joins: from now on the space is one of theirs."""
        now = to_us(utcnow())
        with self.write() as conn:
            if (
                conn.execute(
                    "UPDATE space_members SET status = 'active', joined_at = ? "
                    "WHERE space_id = ? AND user_id = ? AND status = 'invited'",
                    (now, space_id, user_id),
                ).rowcount
                == 0
            ):
                raise NotFoundError(f"invitation to space {space_id}")
            conn.execute("UPDATE spaces SET updated_at = ? WHERE id = ?", (now, space_id))
        return self.require_space(space_id)

    def remove_member(self, space_id: str, user_id: str) -> Space:
        with self.write() as conn:
            gone = conn.execute(
                "DELETE FROM space_members WHERE space_id = ? AND user_id = ?",
                (space_id, user_id),
            ).rowcount
            if gone == 0:
                raise NotFoundError(f"member {user_id} of space {space_id}")
            conn.execute(
                "UPDATE spaces SET updated_at = ? WHERE id = ?", (to_us(utcnow()), space_id)
            )
        return self.require_space(space_id)

    def find_pair_space(self, owner_id: str, name: str, other: str) -> Space | None:
        """The owner's team space of this name that nobody but ``other`` shares with them."""
        for (space_id,) in self.conn.execute(
            "SELECT id FROM spaces WHERE owner_id = ? AND name = ? AND space_type = 'team' "
            "ORDER BY created_at",
            (owner_id, name),
        ):
            space = self.require_space(space_id)
            if {m.user_id for m in space.members} <= {owner_id, other}:
                return space
        return None

    def shared_copy_id(self, space_id: str, original_id: str) -> str | None:
        """The live copy of ``original_id`` shared into ``space_id``, if there is one."""
        row = self.conn.execute(
            "SELECT id FROM memories WHERE space_id = ? AND provenance IS NOT NULL AND "
            "json_extract(provenance, '$.shared_from_memory') = ? AND state != 'deleted' "
            "ORDER BY created_at DESC LIMIT 1",
            (space_id, original_id),
        ).fetchone()
        return None if row is None else str(row[0])

    # ------------------------------------------------------------------ auto-share rules
    def auto_share_rules(self, space_id: str) -> list[AutoShareRule]:
        return [
            _rule(r)
            for r in self.conn.execute(
                "SELECT id, source_space, categories, tags, min_importance, require_approval, "
                "created_at FROM auto_share_rules WHERE space_id = ? ORDER BY created_at, id",
                (space_id,),
            )
        ]

    def rules_from(self, source_space: str) -> list[tuple[str, AutoShareRule]]:
        """(target space, rule) for every rule that watches ``source_space``."""
        return [
            (r[0], _rule(r[1:]))
            for r in self.conn.execute(
                "SELECT space_id, id, source_space, categories, tags, min_importance, "
                "require_approval, created_at FROM auto_share_rules WHERE source_space = ?",
                (source_space,),
            )
        ]

    def add_auto_share_rule(self, space_id: str, rule: AutoShareRule) -> AutoShareRule:
        with self.write() as conn:
            conn.execute(
                "INSERT INTO auto_share_rules(id, space_id, source_space, categories, tags, "
                "min_importance, require_approval, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    rule.id,
                    space_id,
                    rule.source_space,
                    json.dumps(rule.categories),
                    json.dumps(rule.tags),
                    rule.min_importance,
                    int(rule.require_approval),
                    to_us(rule.created_at),
                ),
            )
        return rule

    def delete_auto_share_rule(self, space_id: str, rule_id: str) -> None:
        with self.write() as conn:
            if (
                conn.execute(
                    "DELETE FROM auto_share_rules WHERE id = ? AND space_id = ?",
                    (rule_id, space_id),
                ).rowcount
                == 0
            ):
                raise NotFoundError(f"auto-share rule {rule_id}")

    # ------------------------------------------------------------------ sharing events
    def add_sharing_event(self, conn: sqlite3.Connection, **event: Any) -> None:
        conn.execute(
            "INSERT INTO sharing_events(id, action, memory_id, from_space, to_space, user_id, "
            "agent_id, content_preview, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
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

    def withdraw_previews(self, conn: sqlite3.Connection, memory_id: str, space_id: str) -> None:
        """A withdrawn share's text leaves the record: later members must not read it there."""
        conn.execute(
            "UPDATE sharing_events SET content_preview = '' WHERE memory_id = ? AND to_space = ?",
            (memory_id, space_id),
        )

    def sharing_events(self, user_id: str, spaces: Sequence[str], since_us: int) -> list[Any]:
        """Events by the user or touching one of their spaces, newest first."""
        marks = ", ".join("?" for _ in spaces) or "NULL"
        return self.conn.execute(
            "SELECT id, action, memory_id, from_space, to_space, user_id, agent_id, "
            "content_preview, at FROM sharing_events WHERE at >= ? AND (user_id = ? OR "
            f"from_space IN ({marks}) OR to_space IN ({marks})) ORDER BY at DESC, id",
            (since_us, user_id, *spaces, *spaces),
        ).fetchall()


def _rule(row: Sequence[Any]) -> AutoShareRule:
    return AutoShareRule(
        id=row[0],
        source_space=row[1],
        categories=json.loads(row[2]),
        tags=json.loads(row[3]),
        min_importance=row[4],
        require_approval=bool(row[5]),
        created_at=from_us(row[6]),
    )
