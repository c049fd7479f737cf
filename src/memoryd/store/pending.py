"""Turns stored before their vectors: the queue of embeddings still to compute.

A conversation sent over the REST API is answered once its turns are durable
(and found by keywords); their vectors are computed after the answer. Each
waiting turn has a row in ``pending_embeddings``, written in the transaction
that stores the turn and deleted in the one that stores its vector, so a
process that stops in between loses nothing: the next one finds the rows.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import TYPE_CHECKING

from memoryd.models import Memory, utcnow
from memoryd.store.database import Database
from memoryd.store.rows import SELECT_COLUMNS, row_to_memory, to_us, vector_to_blob

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt


class PendingEmbeddings(Database):
    def queue_embeddings(self, conn: sqlite3.Connection, memories: Sequence[Memory]) -> None:
        """Inside the caller's write: these memories are stored without their vectors."""
        now = to_us(utcnow())
        conn.executemany(
            "INSERT OR IGNORE INTO pending_embeddings(memory_id, space_id, queued_at) "
            "VALUES (?, ?, ?)",
            [(m.id, m.space_id, now) for m in memories],
        )

    def pending_embeddings(self, limit: int) -> list[Memory]:
        """The oldest memories that wait for a vector (any space), at most ``limit``."""
        rows = self.conn.execute(
            f"SELECT {SELECT_COLUMNS} FROM pending_embeddings p "
            "JOIN memories m ON m.id = p.memory_id ORDER BY p.queued_at, p.rowid LIMIT ?",
            (limit,),
        ).fetchall()
        return [row_to_memory(r) for r in rows]

    def count_pending_embeddings(self) -> int:
        return int(self.conn.execute("SELECT COUNT(*) FROM pending_embeddings").fetchone()[0])

    def drop_orphan_embeddings(self) -> int:
        """Queue rows whose memory is gone (an import rolled back): nothing to embed."""
        with self.write() as conn:
            cursor = conn.execute(
                "DELETE FROM pending_embeddings WHERE memory_id NOT IN (SELECT id FROM memories)"
            )
            return int(cursor.rowcount)

    def store_embeddings(self, memory_ids: Sequence[str], vectors: npt.NDArray[np.float32]) -> None:
        """Write the vectors and take the memories off the queue, in one transaction.

        A memory whose vector was written meanwhile (its content changed and was
        re-embedded) keeps that one.
        """
        with self.write() as conn:
            seq = self._bump_seq(conn)
            conn.executemany(
                "UPDATE memories SET vector = ?, seq = ? WHERE id = ? AND vector IS NULL",
                [(vector_to_blob(v), seq, i) for i, v in zip(memory_ids, vectors, strict=True)],
            )
            conn.executemany(
                "DELETE FROM pending_embeddings WHERE memory_id = ?", [(i,) for i in memory_ids]
            )
