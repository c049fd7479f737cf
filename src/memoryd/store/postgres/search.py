"""The two search legs on PostgreSQL: pgvector's HNSW index and the ``tsvector`` columns.

As SQLite's legs (:mod:`memoryd.store.search`), both take the request's
filter, so the SQL that scopes a search to a tenant's spaces is the same for
both. Nothing is cached in the process: every server on the database sees
every write at once.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from memoryd.errors import StorageError
from memoryd.models import TOOL_OUTPUT_MARK
from memoryd.store.filters import MemoryFilter
from memoryd.store.fts import CJK_RUN, COMMON_TERM_ROWS, word_terms
from memoryd.store.postgres.filters import contains, where_clause
from memoryd.store.postgres.imports import PgImports

# HNSW candidates per search: at least this many, else twice what is asked
EF_SEARCH_MIN = 40
EF_SEARCH_MAX = 1000
# the CJK grams of the ``grams`` column (migration 0001's memoryd_grams)
CJK_GRAMS = (2, 3)


class PgSearchLegs(PgImports):
    dim: int | None = None  # the bound model's, set by bind_embedding_model

    # ------------------------------------------------------------------ search legs
    def vector_search(
        self,
        tenant_id: str,
        space_id: str,
        query: npt.NDArray[np.float32],
        k: int,
        f: MemoryFilter,
    ) -> list[tuple[int, float]]:
        """(rowid, cosine similarity), best first, of active memories that pass ``f``.

        The HNSW index answers first; when it gives fewer than ``k`` (a narrow
        filter leaves few of its candidates), an exact scan of the rows that pass
        the filter does: recall is never lost to the approximate index.
        """
        if self.dim is None:
            raise StorageError("bind_embedding_model() first")
        dim = int(self.dim)
        where, params = where_clause(tenant_id, [space_id], f)
        sql, mark = contains("m.marks", TOOL_OUTPUT_MARK)
        where += f" AND m.state = 'active' AND m.vector IS NOT NULL AND NOT ({sql})"
        params.append(mark)
        distance = f"m.vector::vector({dim}) <=> %s::vector({dim})"
        vector = np.asarray(query, dtype=np.float32)
        with self.write() as conn:
            ef = min(EF_SEARCH_MAX, max(EF_SEARCH_MIN, 2 * k))
            conn.execute(f"SET LOCAL hnsw.ef_search = {ef}")
            rows = conn.execute(
                f"SELECT m.rowid, 1 - ({distance}) FROM memories m WHERE {where} "
                f"ORDER BY {distance} LIMIT %s",
                (vector, *params, vector, k),
            ).fetchall()
            if len(rows) < k:
                rows = conn.execute(
                    f"SELECT c.rowid, 1 - (c.vector::vector({dim}) <=> %s::vector({dim})) "
                    f"FROM (SELECT m.rowid, m.vector FROM memories m WHERE {where} OFFSET 0) c "
                    f"ORDER BY c.vector::vector({dim}) <=> %s::vector({dim}) LIMIT %s",
                    (vector, *params, vector, k),
                ).fetchall()
        return [(int(r[0]), float(r[1])) for r in rows]

    def bm25_search(
        self, tenant_id: str, space_id: str, text: str, k: int, f: MemoryFilter
    ) -> list[tuple[int, float]]:
        """Keyword leg: (rowid, relevance, higher is better), best first.

        English words match by stem (``ts_rank_cd`` over the ``words`` column);
        Chinese and Japanese by their two- and three-character grams (``grams``),
        and a lone character by a substring scan, as in SQLite.
        """
        where, params = where_clause(tenant_id, [space_id], f)
        terms = word_terms(text)
        grams: dict[str, None] = {}
        lone: list[str] = []
        for run in CJK_RUN.findall(text):
            if len(run) == 1:
                lone.append(run)
            for size in CJK_GRAMS:
                grams.update({run[i : i + size]: None for i in range(len(run) - size + 1)})
        scored: dict[int, float] = {}
        if terms:
            query = "(" + " || ".join("plainto_tsquery('english', %s)" for _ in terms) + ")"
            # ranked within the newest COMMON_TERM_ROWS rows that match, as SQLite's common
            # terms are: ts_rank_cd over every match of a common word is what costs
            rows = self.all(
                f"SELECT c.rowid, ts_rank_cd(c.words, {query}) FROM (SELECT m.rowid, m.words "
                f"FROM memories m WHERE m.words @@ {query} AND {where} "
                "ORDER BY m.rowid DESC LIMIT %s) c ORDER BY 2 DESC, c.rowid LIMIT %s",
                (*terms, *terms, *params, COMMON_TERM_ROWS, k),
            )
            for rowid, score in rows:
                scored[int(rowid)] = float(score)
        if grams:
            # the lexemes are CJK characters only, so they need no quoting
            query = " | ".join(f"'{g}'" for g in grams)
            rows = self.all(
                "SELECT m.rowid, ts_rank_cd(m.grams, %s::tsquery) FROM memories m "
                f"WHERE m.grams @@ %s::tsquery AND {where} ORDER BY 2 DESC, m.rowid LIMIT %s",
                (query, query, *params, k),
            )
            for rowid, score in rows:
                scored[int(rowid)] = max(scored.get(int(rowid), 0.0), float(score))
        for sub in lone:  # a lone character is indexed only where it stands alone
            floor = min(scored.values(), default=1.0) * 0.5
            for (rowid,) in self.all(
                f"SELECT m.rowid FROM memories m WHERE {where} AND "
                "(strpos(m.content, %s) > 0 OR strpos(m.l0_abstract, %s) > 0) LIMIT %s",
                (*params, sub, sub, k),
            ):
                scored.setdefault(int(rowid), floor)
        return sorted(scored.items(), key=lambda kv: -kv[1])[:k]
