"""The SQLite file itself: connections, transactions, migrations, error mapping.

Writes are short ``BEGIN IMMEDIATE`` transactions, so an acknowledged write
is in the WAL before the call returns and survives the process being killed.
Each thread gets its own connection; several processes may share the file.
"""

from __future__ import annotations

import functools
import logging
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import ParamSpec, TypeVar

from memoryd.errors import StorageError

log = logging.getLogger(__name__)
P = ParamSpec("P")
R = TypeVar("R")
T = TypeVar("T")

BUSY_TIMEOUT_MS = 30_000


class Database:
    """One SQLite file at the latest schema version."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        self._connections: list[sqlite3.Connection] = []
        self._conn_lock = threading.Lock()
        self._migrate()

    # ------------------------------------------------------------------ plumbing
    def _connect(self) -> sqlite3.Connection:
        try:
            conn = sqlite3.connect(
                self.path,
                timeout=BUSY_TIMEOUT_MS / 1000,
                isolation_level=None,
                check_same_thread=False,
            )
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.execute("PRAGMA foreign_keys = ON")
        except sqlite3.DatabaseError as exc:
            raise StorageError(
                f"cannot open {self.path}: {exc} (the file is not a memoryd database or is "
                "corrupted; restore it from an export or move it aside)"
            ) from exc
        return conn

    @property
    def conn(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._connect()
            self._local.conn = conn
            with self._conn_lock:
                self._connections.append(conn)
        return conn

    def close(self) -> None:
        with self._conn_lock:
            for conn in self._connections:
                conn.close()
            self._connections.clear()
        self._local = threading.local()

    def write(self) -> AbstractContextManager[sqlite3.Connection]:
        """One write transaction; rolled back whole on any error."""
        return self._transaction("BEGIN IMMEDIATE", "write")

    def read(self) -> AbstractContextManager[sqlite3.Connection]:
        """One consistent snapshot for several reads."""
        return self._transaction("BEGIN", "read")

    @contextmanager
    def _transaction(self, begin: str, purpose: str) -> Iterator[sqlite3.Connection]:
        conn = self.conn
        try:
            conn.execute(begin)
        except sqlite3.DatabaseError as exc:
            raise StorageError(f"cannot {purpose} {self.path}: {exc}") from exc
        try:
            yield conn
        except BaseException:
            _end(conn, "ROLLBACK")
            raise
        else:
            conn.execute("COMMIT")

    def _migrate(self) -> None:
        migrations = migration_scripts()
        try:
            conn = self.conn
            current = conn.execute("PRAGMA user_version").fetchone()[0]
            tables = conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()[0]
            if current == 0 and tables > 0:
                raise StorageError(
                    f"{self.path} is an SQLite database of another program; memoryd will "
                    "not touch it (point MEMORYD_HOME at another directory)"
                )
            conn.execute("PRAGMA journal_mode = WAL")
            with self.write() as conn:
                current = conn.execute("PRAGMA user_version").fetchone()[0]
                for number, script in enumerate(migrations, start=1):
                    if number <= current:
                        continue
                    for statement in _split_sql(script.read_text(encoding="utf-8")):
                        conn.execute(statement)
                    conn.execute(f"PRAGMA user_version = {number}")
        except sqlite3.DatabaseError as exc:
            raise StorageError(
                f"{self.path} is not a usable memoryd database ({exc}); restore it from "
                "an export or move it aside"
            ) from exc

    @staticmethod
    def _bump_seq(conn: sqlite3.Connection) -> int:
        row = conn.execute(
            "UPDATE counters SET value = value + 1 WHERE name = 'seq' RETURNING value"
        ).fetchone()
        return int(row[0])

    # ------------------------------------------------------------------ metadata
    def get_meta(self, key: str) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, conn: sqlite3.Connection, key: str, value: str) -> None:
        conn.execute(
            "INSERT INTO meta(key, value) VALUES (?, ?) "
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (key, value),
        )


def migration_scripts() -> list[Traversable]:
    """The schema's migrations in order; the last one's number is the schema version."""
    return sorted(
        (
            p
            for p in resources.files("memoryd.store.migrations").iterdir()
            if p.name.endswith(".sql")
        ),
        key=lambda p: p.name,
    )


def _end(conn: sqlite3.Connection, statement: str) -> None:
    """End a transaction that already failed; a second failure must not hide the first."""
    try:
        conn.execute(statement)
    except sqlite3.DatabaseError as exc:
        log.warning("%s failed after an error: %s", statement, exc)


def _storage_errors(method: Callable[P, R]) -> Callable[P, R]:
    """SQLite's own errors leave the store as StorageError, naming the file."""

    @functools.wraps(method)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return method(*args, **kwargs)
        except sqlite3.DatabaseError as exc:
            store = args[0]
            path = getattr(store, "path", "the database")
            raise StorageError(
                f"{path}: {exc} (if the file is damaged, restore it from an export "
                "or move it aside)"
            ) from exc

    return wrapper


def map_storage_errors(cls: type[T]) -> type[T]:
    """Wrap every public method of ``cls`` (inherited ones too) with ``_storage_errors``."""
    for name in dir(cls):
        member = getattr(cls, name)
        if name.startswith("_") or name in ("write", "read") or not callable(member):
            continue
        if isinstance(vars(cls).get(name), staticmethod):
            continue
        setattr(cls, name, _storage_errors(member))
    return cls


def _split_sql(script: str) -> list[str]:
    """Statements of a migration, keeping trigger bodies whole."""
    statements, buffer = [], ""
    for line in script.splitlines(keepends=True):
        if line.strip().startswith("--") and not buffer:
            continue
        buffer += line
        if sqlite3.complete_statement(buffer):
            statements.append(buffer.strip())
            buffer = ""
    if buffer.strip():
        statements.append(buffer.strip())
    return statements
