"""The two search legs over the store: vectors (in-process index) and keywords (FTS5).

Both take the filter of the request, so the SQL that scopes a search to
the spaces a tenant belongs to is the same for both legs. The vector index
lives in memory and catches up with every committed write, of any process,
by the store's change counter (``seq``) before it answers.
"""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, Any

from memoryd.errors import StorageError
from memoryd.models import TOOL_OUTPUT_MARK
from memoryd.store.filters import MemoryFilter, where_clause
from memoryd.store.fts import BIGRAM, COMMON_TERM_ROWS, build_query, quote_term
from memoryd.store.index_kinds import KIND_CODES, UNKNOWN_KIND
from memoryd.store.rows import blob_to_vector, blobs_to_matrix, to_us
from memoryd.store.spaces import SpaceStore

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from memoryd.store.index_arrays import IndexColumns, IndexRow
    from memoryd.store.vector_index import SpaceIndex, VectorIndex

log = logging.getLogger(__name__)

# rows read from the store at a time when a space's vector index catches up
INDEX_BATCH = 10_000
# a row the vector index holds: active, and not tool output (the first test spares most
# rows the parse of their marks); its parameters are _LIVE_PARAMS
_LIVE = (
    "state = 'active' AND (instr(marks, :quoted_mark) = 0 "
    "OR NOT EXISTS (SELECT 1 FROM json_each(marks) WHERE json_each.value = :mark))"
)
_LIVE_PARAMS = {"quoted_mark": json.dumps(TOOL_OUTPUT_MARK), "mark": TOOL_OUTPUT_MARK}
# a row's memory type as the vector index numbers it (KIND_CODES)
_KIND = (
    "CASE memory_type "
    + " ".join(f"WHEN '{name}' THEN {code}" for name, code in KIND_CODES.items())
    + f" ELSE {UNKNOWN_KIND} END"
)
# the meta key (and space id) of the token of the saved rows a space's index may read back
INDEX_TOKEN = "index_rows:"
# the keyword leg ranks this many times k in the index before filtering
BM25_PROBE_FACTOR = 4


class SearchLegs(SpaceStore):
    index: VectorIndex | None  # set by bind_embedding_model
    # records saved rows' tokens in order, off the search (SQLiteStore.close waits for it)
    vouching: ThreadPoolExecutor

    def _sync_index(self, space_id: str) -> None:
        """Catch the space's index up with every committed write, from any process; then
        keep it on disk if enough of it changed."""
        assert self.index is not None, "bind_embedding_model() first"
        space = self.index.space(space_id)
        with space.lock:
            space.adopt_built()  # a graph built aside since, if any
            with self.read() as conn:
                seq = int(
                    conn.execute("SELECT value FROM counters WHERE name = 'seq'").fetchone()[0]
                )
                if seq != space.seq and space.size == 0 and space.graph is None:
                    self._load_index(conn, space_id, space, seq)
                if space.seq != seq:  # rows written since: the arrays grow as they need
                    space.apply_batches(self._index_rows(conn, space_id, space.seq), seq)
            if not space.save_due():
                return
            token = space.save()
            if token is not None:  # a write: the search must not wait behind another's
                self.vouching.submit(self.vouch_for_index, {space_id: token})

    def _load_index(
        self, conn: sqlite3.Connection, space_id: str, space: SpaceIndex, seq: int
    ) -> None:
        """Fill an empty index: from its saved rows when the database vouches for them and
        they are not ahead of it, else from the rows of the space."""
        saved = None
        if space.rows_file is not None:
            saved = space.rows_file.open(self.get_meta(INDEX_TOKEN + space_id))
        if saved is not None and saved.seq <= seq:
            since = partial(self._index_rows, conn, space_id)
            if space.load_saved(saved, seq, since):
                return
        # sized once, and told whether the space is large enough for its graph
        total = int(
            conn.execute(
                "SELECT count(*) FROM memories WHERE space_id = ?", (space_id,)
            ).fetchone()[0]
        )
        space.load(self._index_columns(conn, space_id, space.dim), seq, total)

    def vouch_for_index(self, tokens: Mapping[str, str]) -> None:
        """Record which saved rows each space's index may read back (``RowsFile``)."""
        if not tokens:
            return
        try:
            with self.write() as conn:
                for space_id, token in tokens.items():
                    self.set_meta(conn, INDEX_TOKEN + space_id, token)
        except StorageError as exc:  # the saved rows stay unused: the next process reads SQLite
            log.warning("cannot record the saved index rows: %s", exc)

    def _index_rows(
        self, conn: sqlite3.Connection, space_id: str, since: int
    ) -> Iterator[list[IndexRow]]:
        """Every row of the space written after ``since``, live or not, in batches; first
        the rows deleted since (a rowid may have been deleted, then taken again)."""
        from memoryd.store.index_arrays import IndexRow

        deleted = conn.execute(
            "SELECT memory_rowid FROM deleted_memories WHERE space_id = ? AND seq > ?",
            (space_id, since),
        ).fetchall()
        if deleted:
            yield [IndexRow(r[0], None, False, None, None, None) for r in deleted]
        # search never returns archived ones, nor tool output unless asked (which
        # then finds it by its words): the filters rely on the index holding neither
        cursor = conn.execute(
            f"SELECT rowid, vector, {_LIVE}, invalidated_at, valid_to, expires_at, valid_from, "
            f"seq, created_at, {_KIND} FROM memories WHERE space_id = :space AND seq > :since",
            {**_LIVE_PARAMS, "space": space_id, "since": since},
        )
        # in batches: a million rows read at once would hold every vector twice
        for rows in iter(lambda: cursor.fetchmany(INDEX_BATCH), []):
            yield [
                IndexRow(
                    rowid=r[0],
                    vector=blob_to_vector(r[1]),
                    alive=bool(r[2]),
                    invalidated_at=r[3],
                    valid_to=r[4],
                    expires_at=r[5],
                    valid_from=r[6],
                    seq=r[7],
                    created_at=r[8],
                    kind=r[9],
                )
                for r in rows
            ]

    def _index_columns(
        self, conn: sqlite3.Connection, space_id: str, dim: int
    ) -> Iterator[IndexColumns]:
        """The space's live rows with a vector, as columns, in batches: the first load."""
        import numpy as np

        from memoryd.store.index_arrays import NEVER, IndexColumns

        cursor = conn.execute(
            "SELECT rowid, vector, min(coalesce(invalidated_at, :never), "
            "coalesce(valid_to, :never), coalesce(expires_at, :never)), "
            f"coalesce(valid_from, -:never), created_at, seq, {_KIND} FROM memories "
            f"WHERE space_id = :space AND vector IS NOT NULL AND {_LIVE}",
            {**_LIVE_PARAMS, "never": int(NEVER), "space": space_id},
        )
        for rows in iter(lambda: cursor.fetchmany(INDEX_BATCH), []):
            rowids, blobs, ends, starts, created, seqs, kinds = zip(*rows, strict=True)
            try:
                vectors = blobs_to_matrix(blobs, dim)
            except ValueError as exc:
                raise StorageError(f"space {space_id}: {exc} (run memoryd reindex)") from None
            yield IndexColumns(
                rowids=np.array(rowids, np.int64),
                vectors=vectors,
                ends=np.array(ends, np.int64),
                starts=np.array(starts, np.int64),
                created=np.array(created, np.int64),
                seqs=np.array(seqs, np.int64),
                kinds=np.array(kinds, np.int64),
            )

    def allowed_rowids(
        self, tenant_id: str, space_ids: Sequence[str], f: MemoryFilter
    ) -> npt.NDArray[np.int64]:
        where, params = where_clause(tenant_id, space_ids, f)
        rows = self.conn.execute(f"SELECT m.rowid FROM memories m WHERE {where}", params).fetchall()
        import numpy as np

        return np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))

    def vector_search(
        self,
        tenant_id: str,
        space_id: str,
        query: npt.NDArray[np.float32],
        k: int,
        f: MemoryFilter,
    ) -> list[tuple[int, float]]:
        if not self.is_member(tenant_id, space_id):
            return []
        self._sync_index(space_id)
        assert self.index is not None
        space = self.index.space(space_id)
        # the index knows when each row was created and its type: a time window and a choice
        # of types need no SQL
        rest = replace(
            f, created_after=None, created_before=None, memory_type=None, exclude_types=()
        )
        allowed, left_out = None, frozenset[int]()
        if (
            rest.not_session_id is not None
            and not replace(rest, not_session_id=None).is_narrowing()
        ):
            # every row but one conversation's (a proxy's recall leaves out the one in
            # progress): its few rows are left out, not every other row listed by SQL
            left_out = self._session_rowids(tenant_id, space_id, rest.not_session_id)
        elif rest.is_narrowing():
            allowed = self.allowed_rowids(tenant_id, [space_id], f)
        live_at = None if f.as_of is not None or f.live_at is None else to_us(f.live_at)
        created = (
            None if f.created_after is None else to_us(f.created_after),
            None if f.created_before is None else to_us(f.created_before),
        )
        with space.lock:
            found = space.search(
                query,
                k + len(left_out),
                live_at=live_at,
                allowed=allowed,
                created=created,
                kinds=kinds_of(f),
            )
        return [hit for hit in found if hit[0] not in left_out][:k]

    def _session_rowids(self, tenant_id: str, space_id: str, session_id: str) -> frozenset[int]:
        rows = self.conn.execute(
            "SELECT rowid FROM memories WHERE tenant_id = ? AND space_id = ? AND session_id = ?",
            (tenant_id, space_id, session_id),
        ).fetchall()
        return frozenset(r[0] for r in rows)

    def _word_plan(self, terms: Sequence[str]) -> tuple[str | None, bool]:
        """A narrower MATCH expression to try before the plain OR of ``terms`` (None: none),
        and whether the plain OR is broad (some word is common: ``COMMON_TERM_ROWS``).

        The narrower one is the OR of the rare words and of the common ones
        together (every common word in one row). It holds the same words as
        the plain OR where two or more are common, so their BM25 scores can be
        compared. Counting a word's rows walks its posting list without
        scoring it, a small fraction of the cost of ranking them.
        """
        counts = {
            t: self.conn.execute(
                "SELECT count(*) FROM (SELECT 1 FROM memories_fts WHERE memories_fts MATCH ? "
                "LIMIT ?)",
                (quote_term(t), COMMON_TERM_ROWS + 1),
            ).fetchone()[0]
            for t in terms
        }
        rare = [quote_term(t) for t in terms if 0 < counts[t] <= COMMON_TERM_ROWS]
        common = [quote_term(t) for t in terms if counts[t] > COMMON_TERM_ROWS]
        if not common:
            return None, False
        together = [" AND ".join(common)] if len(common) > 1 else []
        if not rare:
            return (together[0] if together else None), True
        return " OR ".join([*rare, *(f"({t})" for t in together)]), True

    def _keyword_rows(
        self, table: str, match: str, terms: Sequence[str], where: str, params: list[Any], k: int
    ) -> list[tuple[int, float]]:
        """The ``k`` best rows of one index for ``match``.

        Where a word of the query is common, the words index answers from the
        narrower plan (``_word_plan``) when it finds ``k`` rows; otherwise from
        both it and the plain OR, best score first. Each of them ranks only the
        newest ``COMMON_TERM_ROWS`` rows it matches, so no query scores more
        rows than that however common its words.
        """
        if table != "memories_fts":
            return self._fts_top(table, match, where, params, k)
        narrower, broad = self._word_plan(terms)
        if not broad:
            return self._fts_top(table, match, where, params, k)
        found: dict[int, float] = {}
        if narrower is not None:
            rows = self._fts_top(table, narrower, where, params, k, self._window(table, narrower))
            if len(rows) >= k:
                return rows
            found.update(rows)
        for rowid, score in self._fts_top(
            table, match, where, params, k, self._window(table, match)
        ):
            found[rowid] = max(found.get(rowid, score), score)
        return sorted(found.items(), key=lambda kv: -kv[1])[:k]

    def _window(self, table: str, match: str) -> int:
        """The rowid past which lie the newest ``COMMON_TERM_ROWS`` rows ``match`` finds
        (0: it finds no more than that). Walks the matches newest first, unscored."""
        edge = self.conn.execute(
            f"SELECT rowid FROM {table} WHERE {table} MATCH ? ORDER BY rowid DESC LIMIT 1 OFFSET ?",
            (match, COMMON_TERM_ROWS),
        ).fetchone()
        return 0 if edge is None else int(edge[0])

    def _fts_top(
        self,
        table: str,
        match: str,
        where: str,
        params: list[Any],
        k: int,
        newer_than: int = 0,
    ) -> list[tuple[int, float]]:
        """The ``k`` best rows of one index (with a rowid past ``newer_than``) that pass
        the filter.

        Ranking the index alone and filtering the few winners is several times
        cheaper than joining every match to its row; only when too few of the
        winners pass (other spaces, old versions) does it fall back to the join.
        """
        probe = k * BM25_PROBE_FACTOR
        top = self.conn.execute(
            f"SELECT rowid, -rank FROM {table} WHERE {table} MATCH ? AND rowid > ? "
            "ORDER BY rank LIMIT ?",
            (match, newer_than, probe),
        ).fetchall()
        if top:
            # CROSS JOIN keeps SQLite on the rowids: left to itself, the planner
            # would walk the whole space through the (tenant, space) index
            passing = {
                r[0]
                for r in self.conn.execute(
                    "SELECT m.rowid FROM json_each(?) AS c CROSS JOIN memories m "
                    f"ON m.rowid = c.value WHERE {where}",
                    (json.dumps([r[0] for r in top]), *params),
                )
            }
            kept = [(rowid, score) for rowid, score in top if rowid in passing]
            if len(kept) >= k or len(top) < probe:
                return kept[:k]
        rows = self.conn.execute(
            f"SELECT f.rowid, -bm25({table}) FROM {table} f "
            f"JOIN memories m ON m.rowid = f.rowid "
            f"WHERE {table} MATCH ? AND f.rowid > ? AND {where} ORDER BY bm25({table}) LIMIT ?",
            (match, newer_than, *params, k),
        ).fetchall()
        return [(int(r[0]), float(r[1])) for r in rows]

    def bm25_search(
        self, tenant_id: str, space_id: str, text: str, k: int, f: MemoryFilter
    ) -> list[tuple[int, float]]:
        """Keyword leg: (rowid, BM25 relevance, higher is better), best first."""
        query = build_query(text)
        where, params = where_clause(tenant_id, [space_id], f)
        scored: dict[int, float] = {}
        legs = (
            ("memories_fts", query.words),
            ("memories_tri", query.trigrams),
            ("memories_bi", query.bigrams),
        )
        for table, match in legs:
            if not match:
                continue
            try:
                rows = self._keyword_rows(table, match, query.terms, where, params, k)
            except sqlite3.OperationalError as exc:
                raise self.storage_error(exc, "full-text search failed") from exc
            for rowid, score in rows:
                scored[rowid] = max(scored.get(rowid, 0.0), float(score))
        # a lone CJK character: the bigram index holds it only where it stands alone
        for sub in (s for s in query.substrings if len(s) < BIGRAM):
            floor = min(scored.values(), default=1.0) * 0.5
            for (rowid,) in self.conn.execute(
                f"SELECT m.rowid FROM memories m WHERE {where} AND "
                "(instr(m.content, ?) > 0 OR instr(m.l0_abstract, ?) > 0) LIMIT ?",
                (*params, sub, sub, k),
            ):
                scored.setdefault(rowid, floor)
        ranked = sorted(scored.items(), key=lambda kv: -kv[1])
        return ranked[:k]


def kinds_of(f: MemoryFilter) -> list[int] | None:
    """The index's numbers of the memory types ``f`` keeps (None: every type)."""
    if not f.memory_type and not f.exclude_types:
        return None
    excluded = {str(t) for t in f.exclude_types}
    wanted = {str(t) for t in f.memory_type} if f.memory_type else set(KIND_CODES)
    return sorted(KIND_CODES[name] for name in wanted - excluded)
