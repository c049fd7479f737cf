"""Memories and their history on PostgreSQL (the search legs: :mod:`.search`).

Vectors live in the rows (pgvector), searched through an HNSW index built
for the bound model's dimension; the keyword leg reads two GIN-indexed
``tsvector`` columns (English words, CJK trigrams). Nothing is cached in the
process, so every server on the database sees every write at once.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import psycopg

from memoryd.errors import EmbeddingMismatchError, NotFoundError, StorageError
from memoryd.models import Memory, State, utcnow
from memoryd.store.filters import MemoryFilter
from memoryd.store.history_rows import created_values
from memoryd.store.postgres.database import Conn
from memoryd.store.postgres.filters import where_clause
from memoryd.store.postgres.memory_history import HISTORY_INSERT, PgMemoryHistory
from memoryd.store.postgres.memory_reads import PgMemoryReads
from memoryd.store.postgres.search import PgSearchLegs
from memoryd.store.rows import (
    MEMORY_COLUMNS,
    RECALL_TRUST_STEP,
    SELECT_COLUMNS,
    memory_to_row,
    row_to_memory,
    to_us,
    with_marks,
)

log = logging.getLogger(__name__)
JSONB_COLUMNS = frozenset(("tags", "marks", "relations", "provenance"))
PLACEHOLDERS = ", ".join("%s::jsonb" if c in JSONB_COLUMNS else "%s" for c in MEMORY_COLUMNS)
ASSIGNMENTS = ", ".join(
    f"{c} = %s::jsonb" if c in JSONB_COLUMNS else f"{c} = %s" for c in MEMORY_COLUMNS
)
# how long building the vector index may wait for writes in progress
INDEX_LOCK_TIMEOUT = "2s"


def _vector(value: npt.NDArray[np.float32] | None) -> npt.NDArray[np.float32] | None:
    return None if value is None else np.asarray(value, dtype=np.float32)


class PgMemories(PgMemoryReads, PgMemoryHistory, PgSearchLegs):
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
            cur.executemany(HISTORY_INSERT, [created_values(m, actor, now) for m in memories])

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

    def add_marks(self, memory_id: str, marks: Sequence[str]) -> None:
        """Add bookkeeping marks: no history row, no version (as on SQLite)."""
        with self.write() as conn:
            row = conn.execute(
                "SELECT marks FROM memories WHERE id = %s FOR UPDATE", (memory_id,)
            ).fetchone()
            if row is not None:
                conn.execute(
                    "UPDATE memories SET marks = %s::jsonb WHERE id = %s",
                    (with_marks(row[0], marks), memory_id),
                )

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
