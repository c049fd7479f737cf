"""The context engine's tables in the memoryd database: conversations, messages, blobs, the DAG.

Everything is scoped by tenant at the conversation: a conversation id is looked
up with its tenant, and every other row hangs off that conversation's rowid, so
one tenant can never name another's conversation. Messages are never deleted or
changed; compaction only adds summaries and edges and rewrites the context items.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from memoryd.context.models import Conversation, Item, StoredMessage, Summary
from memoryd.errors import NotFoundError
from memoryd.models import format_ts, utcnow
from memoryd.store.database import Database
from memoryd.store.rows import from_us, to_us

MESSAGE_COLUMNS = (
    "rowid, seq, message_id, role, content, tokens, created_at, tool_calls, tool_results"
)
SUMMARY_COLUMNS = (
    "rowid, id, kind, depth, content, tokens, source_tokens, first_seq, last_seq, "
    "summariser, created_at"
)


@dataclass(frozen=True)
class NewMessage:
    """A message ready to store: parts externalised, tokens estimated, hash computed."""

    message_id: str | None
    content_hash: str
    role: str
    content: str
    tokens: int
    created_at_us: int | None
    tool_calls: Any = None
    tool_results: Any = None


@dataclass(frozen=True)
class NewSummary:
    """A summary a compaction adds; ``children`` are message or summary rowids, in order."""

    id: str
    kind: str
    depth: int
    content: str
    tokens: int
    source_tokens: int
    first_seq: int
    last_seq: int
    summariser: str
    children: tuple[tuple[str, int], ...]  # (child kind, rowid); a planned child: rowid < 0
    triples: tuple[tuple[str, str, str], ...] = ()  # what the summariser extracted, if anything


def _message(row: Sequence[Any]) -> StoredMessage:
    return StoredMessage(
        rowid=row[0],
        seq=row[1],
        message_id=row[2],
        role=row[3],
        content=row[4],
        tokens=row[5],
        created_at=from_us(row[6]),
        tool_calls=None if row[7] is None else json.loads(row[7]),
        tool_results=None if row[8] is None else json.loads(row[8]),
    )


def _summary(row: Sequence[Any]) -> Summary:
    created = from_us(row[10])
    assert created is not None
    return Summary(
        rowid=row[0],
        id=row[1],
        kind=row[2],
        depth=row[3],
        content=row[4],
        tokens=row[5],
        source_tokens=row[6],
        first_seq=row[7],
        last_seq=row[8],
        summariser=row[9],
        created_at=created,
    )


class ContextStore:
    """SQL over the shared database; every method takes or opens its own transaction."""

    def __init__(self, db: Database) -> None:
        self.db = db

    # ------------------------------------------------------------------ conversations
    def find(self, conn: sqlite3.Connection, tenant_id: str, conversation_id: str) -> int | None:
        row = conn.execute(
            "SELECT rowid FROM conversations WHERE tenant_id = ? AND conversation_id = ?",
            (tenant_id, conversation_id),
        ).fetchone()
        return None if row is None else int(row[0])

    def conversation(self, tenant_id: str, conversation_id: str) -> Conversation:
        row = self.db.conn.execute(
            "SELECT rowid, tenant_id, conversation_id, agent_id, title, created_at, updated_at "
            "FROM conversations WHERE tenant_id = ? AND conversation_id = ?",
            (tenant_id, conversation_id),
        ).fetchone()
        if row is None:
            raise NotFoundError(f"conversation {conversation_id}")
        created, updated = from_us(row[5]), from_us(row[6])
        assert created is not None and updated is not None
        return Conversation(row[0], row[1], row[2], row[3], row[4], created, updated)

    def ensure(
        self,
        conn: sqlite3.Connection,
        tenant_id: str,
        conversation_id: str,
        agent_id: str | None,
        title: str,
    ) -> int:
        now = to_us(utcnow())
        conn.execute(
            "INSERT INTO conversations (tenant_id, conversation_id, agent_id, title, created_at, "
            "updated_at) VALUES (?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (tenant_id, conversation_id) "
            "DO UPDATE SET updated_at = excluded.updated_at",
            (tenant_id, conversation_id, agent_id, title, now, now),
        )
        found = self.find(conn, tenant_id, conversation_id)
        assert found is not None
        return found

    def list_conversations(self, tenant_id: str, limit: int) -> list[dict[str, Any]]:
        rows = self.db.conn.execute(
            "SELECT c.conversation_id, c.title, c.agent_id, c.updated_at, "
            "(SELECT COUNT(*) FROM context_messages m WHERE m.conv = c.rowid), "
            "(SELECT COUNT(*) FROM summaries s WHERE s.conv = c.rowid) "
            "FROM conversations c WHERE c.tenant_id = ? ORDER BY c.updated_at DESC LIMIT ?",
            (tenant_id, limit),
        ).fetchall()
        return [
            {
                "conversation_id": r[0],
                "title": r[1],
                "agent_id": r[2],
                "updated_at": format_ts(from_us(r[3])),  # ISO 8601, as every other time
                "messages": r[4],
                "summaries": r[5],
            }
            for r in rows
        ]

    # ------------------------------------------------------------------ messages
    def known(
        self, conn: sqlite3.Connection, conv: int, ids: Sequence[str], hashes: Sequence[str]
    ) -> tuple[set[str], set[str]]:
        """The message ids and content hashes of ``conv`` among those given."""
        have_ids = {
            str(r[0])
            for r in conn.execute(
                "SELECT message_id FROM context_messages WHERE conv = ? AND message_id IN "
                "(SELECT value FROM json_each(?))",
                (conv, json.dumps(list(ids))),
            )
        }
        have_hashes = {
            str(r[0])
            for r in conn.execute(
                "SELECT content_hash FROM context_messages WHERE conv = ? AND content_hash IN "
                "(SELECT value FROM json_each(?))",
                (conv, json.dumps(list(hashes))),
            )
        }
        return have_ids, have_hashes

    def append(
        self, conn: sqlite3.Connection, conv: int, messages: Sequence[NewMessage]
    ) -> list[StoredMessage]:
        """Store messages after the last one and append each as a context item."""
        seq = self.next_seq(conn, conv)
        ord_ = int(
            conn.execute(
                "SELECT COALESCE(MAX(ord), -1) + 1 FROM context_items WHERE conv = ?", (conv,)
            ).fetchone()[0]
        )
        now = to_us(utcnow())
        stored = []
        for i, m in enumerate(messages):
            row = conn.execute(
                "INSERT INTO context_messages (conv, seq, message_id, content_hash, role, content, "
                "tool_calls, tool_results, tokens, created_at, ingested_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING rowid",
                (
                    conv,
                    seq + i,
                    m.message_id,
                    m.content_hash,
                    m.role,
                    m.content,
                    None if m.tool_calls is None else json.dumps(m.tool_calls),
                    None if m.tool_results is None else json.dumps(m.tool_results),
                    m.tokens,
                    m.created_at_us,
                    now,
                ),
            ).fetchone()
            conn.execute(
                "INSERT INTO context_items (conv, ord, kind, ref) VALUES (?, ?, 'message', ?)",
                (conv, ord_ + i, row[0]),
            )
            stored.append(
                StoredMessage(
                    row[0],
                    seq + i,
                    m.message_id,
                    m.role,
                    m.content,
                    m.tokens,
                    from_us(m.created_at_us),
                    m.tool_calls,
                    m.tool_results,
                )
            )
        conn.execute("UPDATE conversations SET updated_at = ? WHERE rowid = ?", (now, conv))
        return stored

    @staticmethod
    def next_seq(conn: sqlite3.Connection, conv: int) -> int:
        return int(
            conn.execute(
                "SELECT COALESCE(MAX(seq), -1) + 1 FROM context_messages WHERE conv = ?", (conv,)
            ).fetchone()[0]
        )

    def messages(self, conn: sqlite3.Connection, rowids: Sequence[int]) -> list[StoredMessage]:
        """Messages by rowid, in conversation order."""
        rows = conn.execute(
            f"SELECT {MESSAGE_COLUMNS} FROM context_messages WHERE rowid IN "
            "(SELECT value FROM json_each(?)) ORDER BY seq",
            (json.dumps(list(rowids)),),
        ).fetchall()
        return [_message(r) for r in rows]

    def all_messages(self, conn: sqlite3.Connection, conv: int) -> list[StoredMessage]:
        rows = conn.execute(
            f"SELECT {MESSAGE_COLUMNS} FROM context_messages WHERE conv = ? ORDER BY seq", (conv,)
        ).fetchall()
        return [_message(r) for r in rows]

    def message_by_id(self, conn: sqlite3.Connection, conv: int, ref: str) -> StoredMessage | None:
        """A message by the host's id, or by ``m<seq>``."""
        row = conn.execute(
            f"SELECT {MESSAGE_COLUMNS} FROM context_messages WHERE conv = ? AND message_id = ?",
            (conv, ref),
        ).fetchone()
        if row is None and ref[:1] == "m" and ref[1:].isdigit():
            row = conn.execute(
                f"SELECT {MESSAGE_COLUMNS} FROM context_messages WHERE conv = ? AND seq = ?",
                (conv, int(ref[1:])),
            ).fetchone()
        return None if row is None else _message(row)

    # ------------------------------------------------------------------ blobs
    def put_blob(
        self, conn: sqlite3.Connection, tenant_id: str, blob_id: str, name: str, content: str
    ) -> None:
        conn.execute(
            "INSERT OR IGNORE INTO context_blobs (tenant_id, id, name, size, content, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (tenant_id, blob_id, name, len(content.encode()), content, to_us(utcnow())),
        )

    def blobs(self, conn: sqlite3.Connection, tenant_id: str, ids: Sequence[str]) -> dict[str, str]:
        rows = conn.execute(
            "SELECT id, content FROM context_blobs WHERE tenant_id = ? AND id IN "
            "(SELECT value FROM json_each(?))",
            (tenant_id, json.dumps(list(ids))),
        ).fetchall()
        return {str(r[0]): str(r[1]) for r in rows}

    # ------------------------------------------------------------------ summaries and items
    def items(self, conn: sqlite3.Connection, conv: int) -> list[Item]:
        return [
            Item(r[0], int(r[1]))
            for r in conn.execute(
                "SELECT kind, ref FROM context_items WHERE conv = ? ORDER BY ord", (conv,)
            )
        ]

    def summaries(self, conn: sqlite3.Connection, rowids: Sequence[int]) -> dict[int, Summary]:
        rows = conn.execute(
            f"SELECT {SUMMARY_COLUMNS} FROM summaries WHERE rowid IN "
            "(SELECT value FROM json_each(?))",
            (json.dumps(list(rowids)),),
        ).fetchall()
        return {int(r[0]): _summary(r) for r in rows}

    def summary_by_id(self, conn: sqlite3.Connection, conv: int, summary_id: str) -> Summary | None:
        row = conn.execute(
            f"SELECT {SUMMARY_COLUMNS} FROM summaries WHERE conv = ? AND id = ?",
            (conv, summary_id),
        ).fetchone()
        return None if row is None else _summary(row)

    def children(self, conn: sqlite3.Connection, summary: int) -> list[tuple[str, int]]:
        return [
            (str(r[0]), int(r[1]))
            for r in conn.execute(
                "SELECT child_kind, child FROM summary_edges WHERE summary = ? ORDER BY ord",
                (summary,),
            )
        ]

    def leaf_messages(self, conn: sqlite3.Connection, summary: int) -> list[int]:
        """The message rowids under a summary, in order, through every level of the DAG."""
        out: list[int] = []
        for kind, child in self.children(conn, summary):
            if kind == "message":
                out.append(child)
            else:
                out += self.leaf_messages(conn, child)
        return out

    def replace_items(
        self,
        conn: sqlite3.Connection,
        conv: int,
        expected: Sequence[Item],
        summaries: Sequence[NewSummary],
        items: Sequence[Item],
    ) -> bool:
        """Add ``summaries`` and make ``items`` the context, if the context still starts
        with ``expected`` (what the plan was made from); False when another compaction
        got there first. ``items`` and the children may name planned summaries by
        ``-(index + 1)`` into ``summaries``. Call inside one write transaction."""
        current = self.items(conn, conv)
        if current[: len(expected)] != list(expected):
            return False
        now = to_us(utcnow())
        made: dict[int, int] = {}
        for index, s in enumerate(summaries):
            row = conn.execute(
                "INSERT INTO summaries (id, conv, kind, depth, content, tokens, source_tokens, "
                "first_seq, last_seq, summariser, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING rowid",
                (
                    s.id,
                    conv,
                    s.kind,
                    s.depth,
                    s.content,
                    s.tokens,
                    s.source_tokens,
                    s.first_seq,
                    s.last_seq,
                    s.summariser,
                    now,
                ),
            ).fetchone()
            made[-(index + 1)] = int(row[0])
            conn.executemany(
                "INSERT INTO summary_edges (summary, ord, child_kind, child) VALUES (?, ?, ?, ?)",
                [
                    (row[0], i, kind, made.get(child, child))
                    for i, (kind, child) in enumerate(s.children)
                ],
            )
        tail = current[len(expected) :]
        final = [Item(i.kind, made.get(i.ref, i.ref)) for i in items] + tail
        conn.execute("DELETE FROM context_items WHERE conv = ?", (conv,))
        conn.executemany(
            "INSERT INTO context_items (conv, ord, kind, ref) VALUES (?, ?, ?, ?)",
            [(conv, i, item.kind, item.ref) for i, item in enumerate(final)],
        )
        return True

    def message_rows(
        self, conn: sqlite3.Connection, rowids: Sequence[int]
    ) -> dict[int, StoredMessage]:
        return {m.rowid: m for m in self.messages(conn, rowids)}
