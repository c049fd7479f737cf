"""The embedded system of record: memories in one SQLite file, FTS5, vectors in the rows.

Every query is scoped by tenant and space here (``filters.where_clause``),
so no door can forget to scope one.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memoryd.errors import EmbeddingMismatchError, NotFoundError, StorageError
from memoryd.models import Memory, State, utcnow
from memoryd.store.agent_tasks import AgentTaskStore
from memoryd.store.aggregates import AggregateStore
from memoryd.store.checkpoints import CheckpointStore
from memoryd.store.database import map_storage_errors
from memoryd.store.filters import MemoryFilter, where_clause
from memoryd.store.history_rows import created_values
from memoryd.store.hnsw_index import DEFAULT_HNSW_THRESHOLD
from memoryd.store.imports import ImportStore
from memoryd.store.memory_history import HISTORY_INSERT, MemoryHistory
from memoryd.store.memory_reads import MemoryReads
from memoryd.store.pending import PendingEmbeddings
from memoryd.store.rows import (
    MEMORY_COLUMNS,
    RECALL_TRUST_STEP,
    SELECT_COLUMNS,
    memory_to_row,
    row_to_memory,
    to_us,
    vector_to_blob,
    with_marks,
)
from memoryd.store.search import SearchLegs
from memoryd.store.session_layers import SessionLayerStore
from memoryd.store.sessions import RawMessage, SessionLog
from memoryd.store.settings import SettingsStore
from memoryd.store.tasks import TaskStore
from memoryd.store.tenants import TenantStore
from memoryd.terms import SORT_COLUMNS

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

DB_FILENAME = "memoryd.db"
# the folder of saved HNSW graphs beside the database file (memoryd.db-graphs)
GRAPH_DIR_SUFFIX = "-graphs"
__all__ = ["DB_FILENAME", "SORT_COLUMNS", "RawMessage", "SQLiteStore"]


@map_storage_errors
class SQLiteStore(
    MemoryReads,
    MemoryHistory,
    SessionLog,
    TenantStore,
    TaskStore,
    AggregateStore,
    ImportStore,
    SearchLegs,
    CheckpointStore,
    SessionLayerStore,
    AgentTaskStore,
    SettingsStore,
    PendingEmbeddings,
):
    def __init__(self, path: Path | str) -> None:
        super().__init__(path)
        self.index = None
        self.vouching = ThreadPoolExecutor(1, thread_name_prefix="memoryd-index-token")

    def close(self) -> None:
        self.vouching.shutdown()  # the tokens of rows saved by searches, then the last ones
        if self.index is not None:  # the spaces that changed enough since their last save
            self.index.stop_building()
            self.vouch_for_index(self.index.save())
        super().close()

    def bind_embedding_model(
        self, name: str, dim: int, hnsw_threshold: int | None = DEFAULT_HNSW_THRESHOLD
    ) -> None:
        """Record the model on first use; refuse another one afterwards."""
        with self.write() as conn:
            stored = conn.execute(
                "SELECT value FROM meta WHERE key IN ('embed_model', 'embed_dim') ORDER BY key"
            ).fetchall()
            if not stored:
                self.set_meta(conn, "embed_model", name)
                self.set_meta(conn, "embed_dim", str(dim))
        if stored:
            stored_dim, stored_name = int(stored[0][0]), stored[1][0]
            if (stored_name, stored_dim) != (name, dim):
                raise EmbeddingMismatchError(
                    f"this store was embedded with {stored_name} ({stored_dim} dimensions) but "
                    f"the configured embedder is {name} ({dim} dimensions); run "
                    "`memoryd reindex` to re-embed every memory with the configured model"
                )
        from memoryd.store.vector_index import VectorIndex  # NumPy: loaded by the first search

        # the HNSW graphs of large spaces are kept beside the database between processes
        graphs = self.path.with_name(self.path.name + GRAPH_DIR_SUFFIX)
        self.index = VectorIndex(dim, hnsw_threshold, graph_dir=graphs, model=name)

    def embedding_bound(self) -> bool:
        """Whether ``bind_embedding_model`` ran (the vector index exists)."""
        return self.index is not None

    # ------------------------------------------------------------------ memories: writes
    def insert_memories(
        self,
        memories: Sequence[Memory],
        vectors: npt.NDArray[np.float32] | Sequence[npt.NDArray[np.float32] | None],
        actor: str | None = None,
        conn: sqlite3.Connection | None = None,
        created: bool = True,
    ) -> None:
        """Insert new memories (with their vectors) and their ``create`` history rows.

        ``created=False`` leaves the history to the caller (an import that
        brings each memory's own history along).
        """
        if conn is None:
            with self.write() as conn:
                self.insert_memories(memories, vectors, actor, conn, created)
            return
        seq = self._bump_seq(conn)
        marks = ", ".join("?" for _ in MEMORY_COLUMNS)
        sql = (
            f"INSERT INTO memories ({', '.join(MEMORY_COLUMNS)}, vector, seq) "
            f"VALUES ({marks}, ?, ?)"
        )
        rows = [
            (*memory_to_row(m), vector_to_blob(v), seq)
            for m, v in zip(memories, vectors, strict=True)
        ]
        try:
            conn.executemany(sql, rows)
        except sqlite3.IntegrityError as exc:
            raise StorageError(f"cannot insert memory: {exc}") from exc
        self.journal_created(conn, memories)
        if not created:
            return
        now = to_us(utcnow())
        conn.executemany(HISTORY_INSERT, [created_values(m, actor, now) for m in memories])

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
        conn: sqlite3.Connection,
        tenant_id: str,
        space_ids: Sequence[str],
        memory_id: str,
        changes: dict[str, Any],
        vector: npt.NDArray[np.float32] | None,
        action: str,
        actor: str | None,
    ) -> Memory:
        old = self._get(conn, tenant_id, space_ids, memory_id)
        if old is None:
            raise NotFoundError(f"memory {memory_id}")
        self.journal_before(conn, old)
        data = old.model_dump()
        data.update(changes)
        data["updated_at"] = changes.get("updated_at", utcnow())
        data["version"] = (old.version or 0) + 1
        new = Memory.model_validate(data)
        seq = self._bump_seq(conn)
        assignments = ", ".join(f"{c} = ?" for c in MEMORY_COLUMNS)
        params: list[Any] = [*memory_to_row(new), seq]
        extra = ", seq = ?"
        if vector is not None:
            extra += ", vector = ?"
            params.append(vector_to_blob(vector))
        conn.execute(f"UPDATE memories SET {assignments}{extra} WHERE id = ?", (*params, memory_id))
        self._history(conn, old, new, action, actor)
        return new

    def supersede(
        self,
        old: Memory,
        new: Memory,
        vector: npt.NDArray[np.float32],
        actor: str | None = None,
    ) -> Memory:
        """Store ``new`` in place of ``old``, in one transaction.

        ``old`` stays, invalidated now (``as_of`` still finds it), and hands its
        ``key`` on to ``new``; ``new`` records that it supersedes ``old``.
        """
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
                f"SELECT {SELECT_COLUMNS} FROM memories m WHERE {where} AND m.state != ?",
                (*params, state.value),
            ).fetchall()
            if not rows:
                return 0
            seq = self._bump_seq(conn)
            for row in rows:
                old = row_to_memory(row)
                self.journal_before(conn, old)
                conn.execute(
                    "UPDATE memories SET state = ?, updated_at = ?, version = "
                    "COALESCE(version, 0) + 1, seq = ? WHERE id = ?",
                    (state.value, to_us(now), seq, old.id),
                )
                new = old.model_copy(
                    update={"state": state, "updated_at": now, "version": (old.version or 0) + 1}
                )
                self._history(conn, old, new, f"state:{state.value}", actor)
        return len(rows)

    def add_marks(self, memory_id: str, marks: Sequence[str]) -> None:
        """Add memoryd's bookkeeping marks (what a statement is about) to a memory.

        Not a change of what the memory says: no seq bump, no history row, no version.
        """
        with self.write() as conn:
            row = conn.execute("SELECT marks FROM memories WHERE id = ?", (memory_id,)).fetchone()
            if row is not None:
                conn.execute(
                    "UPDATE memories SET marks = ? WHERE id = ?",
                    (with_marks(row[0], marks), memory_id),
                )

    def touch(self, memory_ids: Sequence[str], at_us: int) -> None:
        """Count a recall, and trust a recalled memory a little more (seed 001: +0.02, at most 1).

        Not a content change: no seq bump, no history row.
        """
        if not memory_ids:
            return
        marks = ", ".join("?" for _ in memory_ids)
        with self.write() as conn:
            conn.execute(
                f"UPDATE memories SET access_count = access_count + 1, last_accessed_at = ?, "
                f"confidence = MIN(1.0, confidence + ?) WHERE id IN ({marks})",
                (at_us, RECALL_TRUST_STEP, *memory_ids),
            )
