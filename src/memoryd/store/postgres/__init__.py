"""PostgreSQL as memoryd's second backend: pgvector for vectors, tsvector for keywords.

Chosen by ``MEMORYD_DATABASE_URL=postgresql://…`` (or ``--database``); the
default stays SQLite in the home directory. See docs/scaling.md.
"""

from __future__ import annotations

from memoryd.store.postgres.store import PostgresStore, open_postgres

__all__ = ["PostgresStore", "open_postgres"]
