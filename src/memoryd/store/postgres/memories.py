"""Memories and their history on PostgreSQL (the search legs: :mod:`.search`).

Vectors live in the rows (pgvector), searched through an HNSW index built
for the bound model's dimension; the keyword leg reads two GIN-indexed
``tsvector`` columns (English words, CJK trigrams). Nothing is cached in the
process, so every server on the database sees every write at once.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import psycopg

from memoryd.errors import EmbeddingMismatchError, NotFoundError, StorageError
from memoryd.models import Memory, State, utcnow
from memoryd.store.filters import MemoryFilter
from memoryd.store.postgres.database import Conn
from memoryd.store.postgres.filters import where_clause
from memoryd.store.postgres.search import PgSearchLegs
from memoryd.store.rows import MEMORY_COLUMNS, SELECT_COLUMNS, memory_to_row, row_to_memory, to_us
from memoryd.store.scopes import Viewer

log = logging.getLogger(__name__)
# what one recall adds to a memory's confidence (as in the SQLite store)
RECALL_TRUST_STEP = 0.02
SORT_COLUMNS = ("created_at", "updated_at", "importance", "access_count")
JSONB_COLUMNS = frozenset(("tags", "marks", "relations", "provenance"))
PLACEHOLDERS = ", ".join("%s::jsonb" if c in JSONB_COLUMNS else "%s" for c in MEMORY_COLUMNS)
ASSIGNMENTS = ", ".join(
    f"{c} = %s::jsonb" if c in JSONB_COLUMNS else f"{c} = %s" for c in MEMORY_COLUMNS
)
# how long building the vector index may wait for writes in progress
INDEX_LOCK_TIMEOUT = "2s"
HISTORY_INSERT = (
    "INSERT INTO memory_history(memory_id, tenant_id, space_id, action, old_value, "
    "new_value, actor, at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)"
)


def _json(value: Any) -> str | None:
    return None if value is None else json.dumps(value, ensure_ascii=False)


def _vector(value: npt.NDArray[np.float32] | None) -> npt.NDArray[np.float32] | None:
    return None if value is None else np.asarray(value, dtype=np.float32)


class PgMemories(PgSearchLegs):
    # ------------------------------------------------------------------ the model
    def bind_embedding_model(self, name: str, dim: int, hnsw_threshold: int | None = None) -> None:
        """Record the model on first use, refuse another one afterwards; index its vectors.

        ``hnsw_threshold`` is the SQLite index's; PostgreSQL always has its HNSW index.
        """
        with self.write() as conn:
            conn.execute("SELECT pg_advisory_xact_lock(hashtext('memoryd-embed-model'))")
            stored: dict[str, str] = dict(
                conn.execute(
                    "SELECT key, value FROM meta WHERE key IN ('embed_model', 'embed_dim')"
                ).fetchall()
            )
            if not stored:
                self.set_meta(conn, "embed_model", name)
                self.set_meta(conn, "embed_dim", str(dim))
        if stored and (stored["embed_model"], int(stored["embed_dim"])) != (name, dim):
            raise EmbeddingMismatchError(
                f"this store was embedded with {stored['embed_model']} ({stored['embed_dim']} "
                f"dimensions) but the configured embedder is {name} ({dim} dimensions); run "
                "`memoryd reindex` to re-embed every memory with the configured model"
            )
        self.dim = dim
        self._ensure_vector_index(dim)

    def _ensure_vector_index(self, dim: int) -> None:
        """The HNSW index of the model's vectors, made once, by whichever server comes first.

        Building it locks the table against writes, so it is tried only where it is
        missing, and given up after ``INDEX_LOCK_TIMEOUT`` rather than waiting behind
        open writes (the model is often bound by a thread inside one): search stays
        exact until a later start builds it.
        """
        index = f"memories_vector_{int(dim)}"
        if self.one("SELECT to_regclass(%s)", (index,)) != (None,):
            return
        try:
            with self.write() as conn:
                conn.execute(f"SET LOCAL lock_timeout = '{INDEX_LOCK_TIMEOUT}'")
                conn.execute(
                    f"CREATE INDEX IF NOT EXISTS {index} ON memories "
                    f"USING hnsw ((vector::vector({int(dim)})) vector_cosine_ops)"
                )
        except (psycopg.errors.LockNotAvailable, psycopg.errors.UniqueViolation) as exc:
            log.warning(
                "vector index not built now (%s); search is exact until a later start builds it",
                exc,
            )

    def embedding_bound(self) -> bool:
        return self.dim is not None

    # ------------------------------------------------------------------ writes
    def insert_memories(
        self,
        memories: Sequence[Memory],
        vectors: npt.NDArray[np.float32] | Sequence[npt.NDArray[np.float32] | None],
        actor: str | None = None,
        conn: Conn | None = None,
        created: bool = True,
    ) -> None:
        """Insert new memories (with their vectors) and their ``create`` history rows."""
        if conn is None:
            with self.write() as conn:
                self.insert_memories(memories, vectors, actor, conn, created)
            return
        rows = [(*memory_to_row(m), _vector(v)) for m, v in zip(memories, vectors, strict=True)]
        with conn.cursor() as cur:
            try:
                cur.executemany(
                    f"INSERT INTO memories ({', '.join(MEMORY_COLUMNS)}, vector) "
                    f"VALUES ({PLACEHOLDERS}, %s)",
                    rows,
                )
            except Exception as exc:
                if type(exc).__name__ == "UniqueViolation":
                    raise StorageError(f"cannot insert memory: {exc}") from exc
                raise
            self.journal_created(conn, memories)
            if not created:
                return
            now = to_us(utcnow())
            cur.executemany(
                HISTORY_INSERT,
                [
                    (m.id, m.tenant_id, m.space_id, "create", None, _json(m.to_json()), actor, now)
                    for m in memories
                ],
            )

    def update_memory(
        self,
        tenant_id: str,
        space_ids: Sequence[str],
        memory_id: str,
        changes: dict[str, Any],
        vector: npt.NDArray[np.float32] | None = None,
        action: str = "update",
        actor: str | None = None,
    ) -> Memory:
        """Apply ``changes`` to one memory, bump its version, keep the old values in history."""
        with self.write() as conn:
            return self._update(
                conn, tenant_id, space_ids, memory_id, changes, vector, action, actor
            )

    def _update(
        self,
        conn: Conn,
        tenant_id: str,
        space_ids: Sequence[str],
        memory_id: str,
        changes: dict[str, Any],
        vector: npt.NDArray[np.float32] | None,
        action: str,
        actor: str | None,
    ) -> Memory:
        old = self._get(conn, tenant_id, space_ids, memory_id, lock=True)
        if old is None:
            raise NotFoundError(f"memory {memory_id}")
        self.journal_before(conn, old)
        data = old.model_dump()
        data.update(changes)
        data["updated_at"] = changes.get("updated_at", utcnow())
        data["version"] = (old.version or 0) + 1
        new = Memory.model_validate(data)
        params: list[Any] = list(memory_to_row(new))
        extra = ""
        if vector is not None:
            extra = ", vector = %s"
            params.append(_vector(vector))
        conn.execute(
            f"UPDATE memories SET {ASSIGNMENTS}{extra} WHERE id = %s", (*params, memory_id)
        )
        self._history(conn, old, new, action, actor)
        return new

    def supersede(
        self, old: Memory, new: Memory, vector: npt.NDArray[np.float32], actor: str | None = None
    ) -> Memory:
        """Store ``new`` in place of ``old``, in one transaction (see the SQLite store)."""
        now = utcnow()
        changes = {"invalidated_at": now, "valid_to": now, "superseded_by": new.id, "key": None}
        with self.write() as conn:
            self._update(
                conn, old.tenant_id, [old.space_id], old.id, changes, None, "supersede", actor
            )
            self.insert_memories([new], [vector], actor, conn)
        return new

    def _history(
        self, conn: Conn, old: Memory, new: Memory, action: str, actor: str | None
    ) -> None:
        before, after = old.to_json(), new.to_json()
        changed = {k for k in after if before.get(k) != after[k]}
        conn.execute(
            HISTORY_INSERT,
            (
                new.id,
                new.tenant_id,
                new.space_id,
                action,
                _json({k: before.get(k) for k in changed}),
                _json({k: after[k] for k in changed}),
                actor,
                to_us(utcnow()),
            ),
        )

    def set_state_where(
        self,
        tenant_id: str,
        space_ids: Sequence[str],
        f: MemoryFilter,
        state: State,
        actor: str | None = None,
    ) -> int:
        """Move every memory matching ``f`` to ``state`` (soft delete), with history."""
        where, params = where_clause(tenant_id, space_ids, f)
        now = utcnow()
        with self.write() as conn:
            rows = conn.execute(
                f"SELECT {SELECT_COLUMNS} FROM memories m WHERE {where} AND m.state != %s "
                "ORDER BY m.rowid FOR UPDATE",
                (*params, state.value),
            ).fetchall()
            for row in rows:
                old = row_to_memory(row)
                self.journal_before(conn, old)
                conn.execute(
                    "UPDATE memories SET state = %s, updated_at = %s, "
                    "version = COALESCE(version, 0) + 1 WHERE id = %s",
                    (state.value, to_us(now), old.id),
                )
                new = old.model_copy(
                    update={"state": state, "updated_at": now, "version": (old.version or 0) + 1}
                )
                self._history(conn, old, new, f"state:{state.value}", actor)
        return len(rows)

    def touch(self, memory_ids: Sequence[str], at_us: int) -> None:
        """Count a recall, and trust a recalled memory a little more (at most 1)."""
        if not memory_ids:
            return
        with self.write() as conn:
            conn.execute(
                "UPDATE memories SET access_count = access_count + 1, last_accessed_at = %s, "
                "confidence = LEAST(1.0, confidence + %s) WHERE id = ANY(%s)",
                (at_us, RECALL_TRUST_STEP, list(memory_ids)),
            )

    # ------------------------------------------------------------------ reads
    def _get(
        self,
        conn: Conn,
        tenant_id: str,
        space_ids: Sequence[str],
        memory_id: str,
        lock: bool = False,
        viewer: Viewer | None = None,
    ) -> Memory | None:
        where, params = where_clause(
            tenant_id, space_ids, MemoryFilter(ids=[memory_id], state=list(State), viewer=viewer)
        )
        row = conn.execute(
            f"SELECT {SELECT_COLUMNS} FROM memories m WHERE {where}"
            + (" FOR UPDATE OF m" if lock else ""),
            params,
        ).fetchone()
        return None if row is None else row_to_memory(row)

    def get(
        self,
        tenant_id: str,
        space_ids: Sequence[str],
        memory_id: str,
        viewer: Viewer | None = None,
    ) -> Memory | None:
        """The memory, if the tenant (and ``viewer``, an agent, when given) may see it."""
        with self.pool.connection() as conn:
            return self._get(conn, tenant_id, space_ids, memory_id, viewer=viewer)

    def memory_ids_like(
        self,
        tenant_id: str,
        space_ids: Sequence[str],
        prefix: str,
        limit: int,
        viewer: Viewer | None = None,
    ) -> list[str]:
        where, params = where_clause(
            tenant_id, space_ids, MemoryFilter(state=list(State), viewer=viewer)
        )
        return self._ids_with_prefix("memories m", "m.id", prefix, where, params, limit)

    def ids_with_prefix(
        self, table: str, column: str, prefix: str, where: str, params: Sequence[Any], limit: int
    ) -> list[str]:
        """Values of ``column`` starting with ``prefix``; ``where`` is a simple condition
        written with ``?`` placeholders, as callers write it for either backend."""
        return self._ids_with_prefix(table, column, prefix, where.replace("?", "%s"), params, limit)

    def _ids_with_prefix(
        self, table: str, column: str, prefix: str, where: str, params: Sequence[Any], limit: int
    ) -> list[str]:
        rows = self.all(
            f"SELECT {column} FROM {table} WHERE left({column}, %s) = %s AND {where} "
            f'ORDER BY {column} COLLATE "C" LIMIT %s',
            (len(prefix), prefix, *params, limit),
        )
        return [r[0] for r in rows]

    def memory_id_taken(self, memory_id: str) -> bool:
        return self.one("SELECT 1 FROM memories WHERE id = %s", (memory_id,)) is not None

    def vectors_of(self, memory_ids: Sequence[str]) -> dict[str, npt.NDArray[np.float32]]:
        rows = self.all(
            "SELECT id, vector FROM memories WHERE id = ANY(%s) AND vector IS NOT NULL",
            (list(memory_ids),),
        )
        return {r[0]: np.asarray(r[1], dtype=np.float32) for r in rows}

    def get_vector(self, memory_id: str) -> npt.NDArray[np.float32] | None:
        row = self.one("SELECT vector FROM memories WHERE id = %s", (memory_id,))
        return None if row is None or row[0] is None else np.asarray(row[0], dtype=np.float32)

    def list_memories(
        self,
        tenant_id: str,
        space_ids: Sequence[str],
        f: MemoryFilter,
        sort: str = "created_at",
        order: str = "desc",
        limit: int = 20,
        offset: int = 0,
        with_total: bool = True,
    ) -> tuple[list[Memory], int]:
        """A page of memories and how many match (-1 without ``with_total``)."""
        where, params = where_clause(tenant_id, space_ids, f)
        column = sort if sort in SORT_COLUMNS else "created_at"
        direction = "DESC" if order == "desc" else "ASC"
        with self.read() as conn:
            total = (
                conn.execute(f"SELECT COUNT(*) FROM memories m WHERE {where}", params).fetchone()
                if with_total
                else None
            )
            rows = conn.execute(
                f"SELECT {SELECT_COLUMNS} FROM memories m WHERE {where} "
                f"ORDER BY m.{column} {direction}, m.rowid {direction} LIMIT %s OFFSET %s",
                (*params, limit, offset),
            ).fetchall()
        return [row_to_memory(r) for r in rows], -1 if total is None else int(total[0])

    def count(self, tenant_id: str, space_ids: Sequence[str], f: MemoryFilter) -> int:
        where, params = where_clause(tenant_id, space_ids, f)
        row = self.one(f"SELECT COUNT(*) FROM memories m WHERE {where}", params)
        return 0 if row is None else int(row[0])

    def iter_all(
        self,
        tenant_id: str,
        space_ids: Sequence[str],
        batch: int = 1000,
        viewer: Viewer | None = None,
    ) -> Iterator[Memory]:
        """Every memory in any state (that ``viewer`` may see), in insertion order (export)."""
        last = 0
        where, params = where_clause(
            tenant_id, space_ids, MemoryFilter(state=list(State), viewer=viewer)
        )
        while True:
            rows = self.all(
                f"SELECT {SELECT_COLUMNS}, m.rowid FROM memories m WHERE {where} "
                "AND m.rowid > %s ORDER BY m.rowid LIMIT %s",
                (*params, last, batch),
            )
            if not rows:
                return
            for row in rows:
                yield row_to_memory(row)
            last = rows[-1][-1]

    def by_rowids(self, rowids: Sequence[int]) -> dict[int, Memory]:
        rows = self.all(
            f"SELECT {SELECT_COLUMNS}, m.rowid FROM memories m WHERE m.rowid = ANY(%s)",
            (list(rowids),),
        )
        return {int(r[-1]): row_to_memory(r) for r in rows}

    def space_history(self, tenant_id: str, space_id: str) -> Iterator[dict[str, Any]]:
        """Every history row of a space's memories, oldest first (export)."""
        rows = self.all(
            "SELECT memory_id, action, old_value, new_value, actor, at FROM memory_history "
            "WHERE tenant_id = %s AND space_id = %s ORDER BY id",
            (tenant_id, space_id),
        )
        for memory_id, action, old, new, actor, at in rows:
            yield {
                "memory_id": memory_id,
                "action": action,
                "old": json.loads(old) if old else None,
                "new": json.loads(new) if new else None,
                "actor": actor,
                "at": at,
            }

    def add_history(self, tenant_id: str, space_id: str, rows: Sequence[dict[str, Any]]) -> None:
        with self.write() as conn, conn.cursor() as cur:
            cur.executemany(
                HISTORY_INSERT,
                [
                    (
                        r["memory_id"],
                        tenant_id,
                        space_id,
                        r["action"],
                        _json(r["old"]),
                        _json(r["new"]),
                        r["actor"],
                        r["at"],
                    )
                    for r in rows
                ],
            )

    def history(self, memory_id: str) -> list[dict[str, Any]]:
        rows = self.all(
            "SELECT action, old_value, new_value, actor, at FROM memory_history "
            "WHERE memory_id = %s ORDER BY id",
            (memory_id,),
        )
        return [
            {
                "action": a,
                "old": json.loads(o) if o else None,
                "new": json.loads(n) if n else None,
                "actor": actor,
                "at": at,
            }
            for a, o, n, actor, at in rows
        ]
