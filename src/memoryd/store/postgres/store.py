"""The PostgreSQL store: every part of the store protocol, over one connection pool."""

from __future__ import annotations

from memoryd.store.postgres.agent_tasks import PgAgentTasks
from memoryd.store.postgres.continuity import PgContinuity
from memoryd.store.postgres.database import map_pg_errors
from memoryd.store.postgres.memories import PgMemories
from memoryd.store.postgres.records import PgRecords
from memoryd.store.postgres.tasks import PgTasks
from memoryd.store.postgres.tenancy import PgTenancy
from memoryd.store.protocol import Store


@map_pg_errors
class PostgresStore(PgMemories, PgTenancy, PgTasks, PgRecords, PgContinuity, PgAgentTasks):
    """memoryd's records in one PostgreSQL database, shared by any number of servers."""


def open_postgres(url: str) -> Store:
    """The store at ``url``, migrated; a clear StorageError when it cannot be reached."""
    return PostgresStore(url)
