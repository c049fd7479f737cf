"""The PostgreSQL database itself: a connection pool, transactions, migrations, errors.

Many memoryd servers may share one database, so nothing here caches what
another server could change: every read goes to the database. Migrations run
under an advisory lock, so servers starting together apply each one once.
Times are BIGINT microseconds since the epoch, as in the SQLite store, so the
row mapping (``memoryd.store.rows``) is shared.
"""

from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from importlib import resources
from typing import Any, ParamSpec, TypeVar

import psycopg
from pgvector.psycopg.vector import VectorLoader, register_vector_info
from psycopg.abc import Buffer
from psycopg.conninfo import conninfo_to_dict
from psycopg.types import TypeInfo
from psycopg.types.string import TextLoader
from psycopg_pool import ConnectionPool, PoolTimeout

from memoryd.errors import (
    StorageDamagedError,
    StorageError,
    StorageFullError,
    StorageReadOnlyError,
)
from memoryd.models import format_ts, utcnow
from memoryd.store.turns import turn_params, turn_sql

log = logging.getLogger(__name__)
P = ParamSpec("P")
R = TypeVar("R")
T = TypeVar("T")

Conn = psycopg.Connection[tuple[Any, ...]]
CONNECT_TIMEOUT_S = 10
POOL_SIZE = 8
# one number for the migration lock, the same in every memoryd
MIGRATION_LOCK = 0x6D656D6F7279
PGVECTOR_HELP = (
    "the pgvector extension is needed: install it on the database server "
    "(Debian/Ubuntu: `apt install postgresql-16-pgvector`; other systems: "
    "https://github.com/pgvector/pgvector#installation) and run "
    "`CREATE EXTENSION vector;` in the database as its owner or a superuser"
)


def describe(url: str) -> str:
    """``database "x" on host h`` for messages; never the password."""
    try:
        info = conninfo_to_dict(url)
    except psycopg.ProgrammingError:
        return "the database named by the URL"
    host = info.get("host") or "localhost"
    port = info.get("port")
    where = f"{host}:{port}" if port and not str(host).startswith("/") else str(host)
    return f'database "{info.get("dbname") or info.get("user") or "postgres"}" on {where}'


class _NumpyVectorLoader(VectorLoader):
    """pgvector's text loader, handing back the float32 array the store works with."""

    def load(self, data: Buffer) -> Any:
        vector = super().load(data)
        return None if vector is None else vector.to_numpy()


def _configure(conn: Conn) -> None:
    """Every pooled connection: vectors as NumPy arrays (and NumPy arrays as vectors),
    JSON columns as their text (``rows.row_to_memory`` parses them, as it does SQLite's)."""
    info = TypeInfo.fetch(conn, "vector")
    register_vector_info(conn, info)
    assert info is not None
    conn.adapters.register_loader(info.oid, _NumpyVectorLoader)
    conn.adapters.register_loader("jsonb", TextLoader)


class PgDatabase:
    """One PostgreSQL database at the latest schema version."""

    def __init__(self, url: str, pool_size: int = POOL_SIZE) -> None:
        self.url = url
        self.where = describe(url)
        self._check_reachable()
        self._ensure_extensions()
        self.pool: ConnectionPool[Conn] = ConnectionPool(
            url,
            min_size=1,
            max_size=pool_size,
            kwargs={"autocommit": True, "connect_timeout": CONNECT_TIMEOUT_S},
            configure=_configure,
            open=False,
            name="memoryd",
        )
        try:
            self.pool.open(wait=True, timeout=CONNECT_TIMEOUT_S * 2)
        except PoolTimeout as exc:
            raise StorageError(f"cannot connect to PostgreSQL {self.where}: {exc}") from None
        self._migrate()

    # ------------------------------------------------------------------ start
    def _connect(self) -> Conn:
        try:
            return psycopg.connect(self.url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S)
        except psycopg.ProgrammingError as exc:
            raise StorageError(f"not a PostgreSQL URL ({exc})") from None
        except psycopg.OperationalError as exc:
            reason = str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__
            raise StorageError(
                f"cannot connect to PostgreSQL {self.where}: {reason} (check "
                "MEMORYD_DATABASE_URL / --database: host, port, database name, user, password)"
            ) from None

    def _check_reachable(self) -> None:
        self._connect().close()

    def _ensure_extensions(self) -> None:
        with self._connect() as conn:
            have = conn.execute(
                "SELECT name, installed_version FROM pg_available_extensions WHERE name = 'vector'"
            ).fetchone()
            if have is None:
                raise StorageError(f"PostgreSQL {self.where} has no pgvector: {PGVECTOR_HELP}")
            if have[1] is None:
                try:
                    with conn.transaction():  # servers starting together: one creates it
                        conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
                        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
                except psycopg.Error as exc:
                    raise StorageError(
                        f"cannot enable pgvector in {self.where} ({exc}): {PGVECTOR_HELP}"
                    ) from None

    def _migrate(self) -> None:
        scripts = sorted(
            (
                p
                for p in resources.files("memoryd.store.postgres.migrations").iterdir()
                if p.name.endswith(".sql")
            ),
            key=lambda p: p.name,
        )
        with self.write() as conn:
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
            conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations "
                "(name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)"
            )
            applied = {r[0] for r in conn.execute("SELECT name FROM schema_migrations")}
            for script in scripts:
                if script.name in applied:
                    continue
                conn.execute(script.read_text(encoding="utf-8").encode())
                conn.execute(
                    "INSERT INTO schema_migrations(name, applied_at) VALUES (%s, %s)",
                    (script.name, format_ts(utcnow())),
                )

    # ------------------------------------------------------------------ transactions
    def write(self) -> AbstractContextManager[Conn]:
        """One write transaction; rolled back whole on any error."""
        return self._transaction(read_only=False)

    def read(self) -> AbstractContextManager[Conn]:
        """One consistent snapshot for several reads."""
        return self._transaction(read_only=True)

    @contextmanager
    def _transaction(self, read_only: bool) -> Iterator[Conn]:
        # psycopg's errors pass through: the store's methods turn them into StorageError
        with self.pool.connection() as conn, conn.transaction():
            if read_only:
                conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            yield conn

    def all(self, query: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Every row of one statement, outside any transaction of the caller's."""
        with self.pool.connection() as conn:
            return conn.execute(query.encode(), params).fetchall()

    def one(self, query: str, params: Sequence[Any] = ()) -> tuple[Any, ...] | None:
        with self.pool.connection() as conn:
            return conn.execute(query.encode(), params).fetchone()

    def close(self) -> None:
        self.pool.close()

    def storage_problem(self) -> StorageError | None:
        """The server's disk is the database server's to watch: damage only."""
        return self.storage_damage()

    def storage_damage(self) -> StorageDamagedError | None:
        """PostgreSQL keeps its own files sound; an unreachable server is a StorageError."""
        return None

    # ------------------------------------------------------------------ metadata
    def get_meta(self, key: str) -> str | None:
        row = self.one("SELECT value FROM meta WHERE key = %s", (key,))
        return None if row is None else str(row[0])

    def take_turn(self, job: str, every_s: float) -> bool:
        """This process's turn to run ``job``, due every ``every_s`` (``store.turns``)."""
        with self.write() as conn:
            row = conn.execute(turn_sql("%s"), turn_params(job, every_s, utcnow())).fetchone()
        return row is not None

    def set_meta(self, conn: Conn, key: str, value: str) -> None:
        conn.execute(
            "INSERT INTO meta(key, value) VALUES (%s, %s) "
            "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (key, value),
        )

    def error(self, exc: psycopg.Error) -> StorageError:
        said = str(exc).strip()
        if isinstance(exc, psycopg.errors.DiskFull | psycopg.errors.OutOfMemory):
            return StorageFullError(
                f"PostgreSQL {self.where} is out of room ({said}): this write did not happen; "
                "free some space and send it again"
            )
        if isinstance(exc, psycopg.errors.ReadOnlySqlTransaction):
            return StorageReadOnlyError(
                f"PostgreSQL {self.where} takes no writes now ({said}): a read-only database "
                "or a standby; reads go on"
            )
        return StorageError(f"PostgreSQL {self.where}: {said}")


def _storage_errors(method: Callable[P, R]) -> Callable[P, R]:
    """psycopg's errors leave the store as StorageError naming the database."""

    def translated(store: object, exc: psycopg.Error) -> StorageError:
        if isinstance(store, PgDatabase):
            return store.error(exc)
        return StorageError(f"PostgreSQL: {exc}")

    if inspect.isgeneratorfunction(method):

        @functools.wraps(method)
        def generator(*args: P.args, **kwargs: P.kwargs) -> Any:
            try:
                yield from method(*args, **kwargs)
            except psycopg.Error as exc:
                raise translated(args[0], exc) from exc

        return generator

    @functools.wraps(method)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return method(*args, **kwargs)
        except psycopg.Error as exc:
            raise translated(args[0], exc) from exc

    return wrapper


def map_pg_errors(cls: type[T]) -> type[T]:
    """Wrap every public method of ``cls`` (inherited ones too) with ``_storage_errors``."""
    for name in dir(cls):
        member = getattr(cls, name)
        if name.startswith("_") or name in ("write", "read") or not callable(member):
            continue
        if isinstance(inspect.getattr_static(cls, name), staticmethod):
            continue
        setattr(cls, name, _storage_errors(member))
    return cls
