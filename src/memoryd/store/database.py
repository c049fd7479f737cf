"""The SQLite file itself: connections, transactions, migrations, error mapping.

Writes are short ``BEGIN IMMEDIATE`` transactions, so an acknowledged write
is in the WAL before the call returns and survives the process being killed.
Each thread gets its own connection; several processes may share the file.

Damage is never met with an empty store or a silent loss:

* A home that held a database keeps a marker beside it (``memoryd.home``).
  With the marker there, or a write-ahead log left behind, a missing or
  empty ``memoryd.db`` is refused: opening it would start a new, empty store
  in place of the lost one (and print a new first key).
* SQLite saying the file is damaged (``SQLITE_CORRUPT``, ``SQLITE_NOTADB``,
  text that is not UTF-8), or the file being removed or replaced under a
  running process, turns this store read-only: every later write is refused
  with ``StorageDamagedError`` instead of going into a damaged or unlinked
  file, reads go on where they can, and ``storage_problem`` says what is wrong.
"""

from __future__ import annotations

import functools
import inspect
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, closing, contextmanager
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

from memoryd.errors import StorageDamagedError, StorageError, StorageFullError, StorageReadOnlyError
from memoryd.models import format_ts, utcnow
from memoryd.store.damage import (
    MARKER_SUFFIX,
    MARKER_TEXT,
    SQLITE_FULL,
    SQLITE_READONLY,
    damage_detail,
    file_identity,
    is_damage,
    primary_code,
    refuse_lost_database,
)
from memoryd.store.fts import cjk_bigrams
from memoryd.store.rows import half_precision
from memoryd.store.turns import turn_params, turn_sql

log = logging.getLogger(__name__)
# less free space than this on the database's disk: /health says the storage is full
MIN_FREE_BYTES = 64 * 2**20
P = ParamSpec("P")
R = TypeVar("R")
T = TypeVar("T")

BUSY_TIMEOUT_MS = 30_000


class Database:
    """One SQLite file at the latest schema version."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self.marker = self.path.with_suffix(MARKER_SUFFIX)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        self._connections: list[sqlite3.Connection] = []
        self._conn_lock = threading.Lock()
        self.damaged: str | None = None  # what is wrong, once damage was found: read-only
        self._identity: tuple[int, int] | None = None
        self._wal_identity: tuple[int, int] | None = None  # the write-ahead log, once seen
        refuse_lost_database(self.path, self.marker)
        self._migrate()
        self._identity = file_identity(self.path)
        self._mark_home()

    # ------------------------------------------------------------------ plumbing
    def _connect(self) -> sqlite3.Connection:
        if self._identity is not None:
            self._check_file()  # connecting to a path whose file is gone would create one
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
            # the bigram index's triggers cut the grams in Python (see 0012_cjk_bigrams)
            conn.create_function("cjk_bigrams", 1, cjk_bigrams, deterministic=True)
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
        if purpose == "write":
            self._check_writable()
        conn = self.conn
        try:
            conn.execute(begin)
        except sqlite3.DatabaseError as exc:
            raise self.storage_error(exc, f"cannot {purpose}") from exc
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
            _use_wal(conn)
            # the functions a migration's SQL calls
            conn.create_function("memoryd_half_precision", 1, half_precision, deterministic=True)
            with self.write() as conn:
                applied = _applied_migrations(conn, migrations)
                for script in migrations:
                    if script.name in applied:
                        continue
                    for statement in _split_sql(script.read_text(encoding="utf-8")):
                        conn.execute(statement)
                    conn.execute(
                        "INSERT INTO schema_migrations(name, applied_at) VALUES (?, ?)",
                        (script.name, format_ts(utcnow())),
                    )
                    applied.add(script.name)
                # the schema version: how many of this release's migrations the file holds
                # (set only when it changes: opening a database must not write to it)
                if conn.execute("PRAGMA user_version").fetchone()[0] != len(applied):
                    conn.execute(f"PRAGMA user_version = {len(applied)}")
        except sqlite3.DatabaseError as exc:
            raise StorageError(
                f"{self.path} is not a usable memoryd database ({exc}); restore it from "
                "an export or move it aside"
            ) from exc

    # ------------------------------------------------------------------ damage
    def storage_error(self, exc: sqlite3.DatabaseError, doing: str = "") -> StorageError:
        """The memoryd error for an SQLite error: damage makes the store read-only."""
        if is_damage(exc):
            return self._damage(damage_detail(exc))
        code = primary_code(exc)
        if code == SQLITE_FULL:
            return StorageFullError(
                f"the disk holding {self.path} is full ({exc}): this write did not happen; "
                "free some space and send it again"
            )
        if code == SQLITE_READONLY:
            return StorageReadOnlyError(
                f"{self.path} cannot be written ({exc}): is its file system read-only? "
                "Reads go on; writes work again once it is writable"
            )
        return StorageError(
            f"{self.path}: {doing + ': ' if doing else ''}{exc} (if the file is damaged, "
            "restore it from a backup or an export, or move it aside)"
        )

    def _damage(self, detail: str) -> StorageDamagedError:
        if self.damaged is None:
            self.damaged = detail
            log.error("%s: %s; memoryd writes nothing more to it", self.path, detail)
        return StorageDamagedError(
            f"the database is damaged ({self.damaged}); memoryd only reads from it now: stop "
            "it, run `memoryd check`, and restore a backup with `memoryd restore BACKUP`"
        )

    def _check_file(self) -> None:
        """The file this store opened is still the one at its path."""
        try:
            now = file_identity(self.path)
        except FileNotFoundError:
            raise self._damage(self._rescue(f"{self.path.name} was removed while in use")) from None
        if self._identity is not None and now != self._identity:
            raise self._damage(f"{self.path.name} was replaced while in use")
        self._check_wal()

    def _check_wal(self) -> None:
        """The write-ahead log is still the one this store writes. Removed under a running
        store, SQLite goes on writing to the unlinked file and every write since the last
        checkpoint is gone at the next start: its content is saved into the database now,
        and nothing more is written until a restart makes a new log. (SQLite itself may
        make a new log when every connection to the file closed: that is no loss, and
        this process then holds no removed one open.)"""
        wal = self.path.with_name(self.path.name + "-wal")
        try:
            now: tuple[int, int] | None = file_identity(wal)
        except FileNotFoundError:
            now = None
        if now == self._wal_identity:
            return
        if self._wal_identity is None or not _holds_removed(wal):
            self._wal_identity = now  # made at the first write, or made anew: nothing lost
            return
        with self._conn_lock:  # one of this store's connections, open on the removed log
            open_on_it = self._connections[0] if self._connections else None
        saved = "its writes could not be saved"
        if open_on_it is not None:
            try:  # through it, into the database file
                busy, _, _ = open_on_it.execute("PRAGMA wal_checkpoint(FULL)").fetchone()
                saved = "some writes may be lost" if busy else "its writes were saved"
            except sqlite3.DatabaseError as exc:
                saved = f"its writes could not be saved ({exc})"
        raise self._damage(
            f"{wal.name} was removed or replaced while in use ({saved} into the database); "
            "restart memoryd to write again"
        )

    def _rescue(self, detail: str) -> str:
        """Save what a removed file held, read through a connection still open on it.

        The process still holds the removed file; once it exits, the data is
        gone. SQLite's backup API copies it, write-ahead log included.
        """
        if self.damaged is not None:
            return self.damaged
        live: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if live is None:  # this thread has none open: another thread's (SQLite serialises)
            with self._conn_lock:
                live = next(iter(self._connections), None)
        if live is None:
            return detail
        saved = self.path.with_name(f"{self.path.name}.rescued-{utcnow():%Y%m%d-%H%M%S}")
        try:
            with closing(sqlite3.connect(saved)) as copy:
                live.backup(copy)
        except (sqlite3.Error, OSError) as exc:
            log.error("could not save what the removed %s held: %s", self.path, exc)
            return detail
        return f"{detail}; what it held is saved as {saved.name}: `memoryd restore` it"

    def _check_writable(self) -> None:
        if self.damaged is not None:
            raise self._damage(self.damaged)
        self._check_file()

    def storage_problem(self) -> StorageError | None:
        """What stops writes now, as far as a cheap look tells: damage, a read-only file
        system, or a disk with less than :data:`MIN_FREE_BYTES` left; None when nothing."""
        damage = self.storage_damage()
        if damage is not None:
            return damage
        try:
            room = os.statvfs(self.path.parent)
        except OSError:
            return None
        if room.f_flag & os.ST_RDONLY:
            return StorageReadOnlyError(f"the file system holding {self.path} is read-only")
        free = room.f_bavail * room.f_frsize
        if free < MIN_FREE_BYTES:
            return StorageFullError(
                f"the disk holding {self.path} has {free // 2**20} MiB free (under "
                f"{MIN_FREE_BYTES // 2**20} MiB): writes may fail until space is freed"
            )
        return None

    def storage_damage(self) -> StorageDamagedError | None:
        """What is wrong with the file, as far as a cheap look tells; None when nothing is."""
        if self.damaged is None:
            try:
                self._check_file()
                self.conn.execute("SELECT key, value FROM meta").fetchall()
            except StorageDamagedError:
                pass
            except sqlite3.DatabaseError as exc:
                self.storage_error(exc)
        return None if self.damaged is None else self._damage(self.damaged)

    def integrity(self, full: bool = False) -> list[str]:
        """SQLite's own check: ``quick_check`` (fast: pages and records), or the full
        ``integrity_check`` (indexes against tables too) with both full-text indexes.
        An empty list means the file is sound."""
        pragma = "integrity_check" if full else "quick_check"
        try:
            rows = [str(r[0]) for r in self.conn.execute(f"PRAGMA {pragma}").fetchall()]
            problems = [] if rows == ["ok"] else rows
            if full and not problems:
                for table in FTS_TABLES:
                    self.conn.execute(f"INSERT INTO {table}({table}) VALUES ('integrity-check')")
                problems = [
                    f"foreign key: {row}"
                    for row in self.conn.execute("PRAGMA foreign_key_check").fetchall()
                ]
        except sqlite3.DatabaseError as exc:
            problems = [str(exc)]
        if problems:
            self._damage(problems[0].splitlines()[-1])
        return problems

    def _mark_home(self) -> None:
        if self.marker.exists():
            return
        try:
            self.marker.write_text(
                MARKER_TEXT.format(db=self.path.name, at=format_ts(utcnow())), encoding="utf-8"
            )
        except OSError as exc:  # a read-only home still serves; it only lacks the guard
            log.warning("cannot write %s: %s", self.marker, exc)

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

    def take_turn(self, job: str, every_s: float) -> bool:
        """This process's turn to run ``job``, due every ``every_s`` (``store.turns``)."""
        with self.write() as conn:
            row = conn.execute(turn_sql("?"), turn_params(job, every_s, utcnow())).fetchone()
        return row is not None

    def set_meta(self, conn: sqlite3.Connection, key: str, value: str) -> None:
        conn.execute(
            "INSERT INTO meta(key, value) VALUES (?, ?) "
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (key, value),
        )


FTS_TABLES = (
    "memories_fts",
    "memories_tri",
    "memories_bi",
    "context_messages_fts",
    "context_messages_tri",
    "summaries_fts",
    "summaries_tri",
)


def _use_wal(conn: sqlite3.Connection) -> None:
    """Put the file in WAL mode, once. The mode is kept in the file, so a process that
    finds it set does nothing; two processes creating one fresh store race for the
    switch, which SQLite refuses at once ("database is locked") rather than waiting:
    the loser retries until the winner's switch shows."""
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    while str(conn.execute("PRAGMA journal_mode").fetchone()[0]).lower() != "wal":
        try:
            conn.execute("PRAGMA journal_mode = WAL")
        except sqlite3.OperationalError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


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


def _applied_migrations(conn: sqlite3.Connection, migrations: list[Traversable]) -> set[str]:
    """The names of the migrations this database has had.

    Recorded by name, not counted: migrations written side by side land in
    any order, and one numbered below a migration already applied must still
    run. A database from before the record had the first ``user_version``
    migrations, in name order.
    """
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations "
        "(name TEXT PRIMARY KEY, applied_at TEXT NOT NULL) WITHOUT ROWID"
    )
    names = {str(r[0]) for r in conn.execute("SELECT name FROM schema_migrations")}
    if not names:
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        names = {script.name for script in migrations[:version]}
        conn.executemany(
            "INSERT INTO schema_migrations(name, applied_at) VALUES (?, ?)",
            [(name, "before the migration record") for name in sorted(names)],
        )
    return names


def _end(conn: sqlite3.Connection, statement: str) -> None:
    """End a transaction that already failed; a second failure must not hide the first."""
    try:
        conn.execute(statement)
    except sqlite3.DatabaseError as exc:
        log.warning("%s failed after an error: %s", statement, exc)


def _storage_errors(method: Callable[P, R]) -> Callable[P, R]:
    """SQLite's own errors leave the store as StorageError, naming the file (a generator's
    too, raised while it is iterated)."""

    def translated(store: object, exc: sqlite3.DatabaseError) -> StorageError:
        if isinstance(store, Database):
            return store.storage_error(exc)
        return StorageError(f"{exc} (if the file is damaged, restore it)")

    if inspect.isgeneratorfunction(method):

        @functools.wraps(method)
        def generator(*args: P.args, **kwargs: P.kwargs) -> Any:
            try:
                yield from method(*args, **kwargs)
            except sqlite3.DatabaseError as exc:
                raise translated(args[0], exc) from exc

        return generator

    @functools.wraps(method)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return method(*args, **kwargs)
        except sqlite3.DatabaseError as exc:
            raise translated(args[0], exc) from exc

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


def _holds_removed(path: Path) -> bool:
    """This process holds ``path`` open although it was removed (Linux: ``/proc/self/fd``
    names such a file "<path> (deleted)"); False where that cannot be told."""
    gone = f"{path} (deleted)"
    try:
        links = list(Path("/proc/self/fd").iterdir())
    except OSError:
        return False
    for link in links:
        try:
            if os.readlink(link) == gone:
                return True
        except OSError:
            continue
    return False


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
