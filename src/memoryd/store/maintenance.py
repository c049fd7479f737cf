"""Backups of the database file, and restoring one: the way back from damage.

A copy of ``memoryd.db`` alone is not a backup: recent writes live in its
write-ahead log (``memoryd.db-wal``) until SQLite folds them in. A backup is
made with SQLite's online backup API instead, through a connection, so it
holds every committed write, WAL included, as one consistent snapshot, and a
running server goes on writing meanwhile (a reader never blocks the writer).
The copy is checked before it takes the backup's name, and is one
self-contained file.

Restoring checks the backup in full first, then moves the current files
aside (never deletes them) and puts a copy of the backup in their place.
"""

from __future__ import annotations

import os
import sqlite3
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

from memoryd.errors import StorageDamagedError, StorageError, ValidationError
from memoryd.models import utcnow
from memoryd.store.damage import MARKER_SUFFIX, refuse_lost_database
from memoryd.store.database import BUSY_TIMEOUT_MS, Database, migration_scripts

SIDE_FILES = ("-wal", "-shm")
# the first bytes of every SQLite database file
SQLITE_HEADER = b"SQLite format 3\x00"


@dataclass(frozen=True)
class Snapshot:
    """A database file and what it holds."""

    path: Path
    bytes: int
    memories: int
    version: int  # of the schema


def _stamp() -> str:
    return utcnow().strftime("%Y%m%d-%H%M%S")


def _connect(path: Path, *, read_only: bool = False) -> sqlite3.Connection:
    """A connection that never creates ``path``, and waits for a busy writer as the store does.

    The live database is opened read-write even to be read: SQLite needs that to
    read a write-ahead log when no other process has the database open."""
    if not path.is_file():
        raise ValidationError(f"{path} does not exist or is not a file")
    mode = "ro" if read_only else "rw"
    try:
        conn = sqlite3.connect(
            f"{path.resolve().as_uri()}?mode={mode}",
            uri=True,
            timeout=BUSY_TIMEOUT_MS / 1000,
            isolation_level=None,
        )
    except sqlite3.DatabaseError as exc:
        raise StorageError(f"cannot open {path}: {exc}") from exc
    return conn


def _verify(
    conn: sqlite3.Connection, path: Path, *, full: bool, label: Path | None = None
) -> Snapshot:
    """What the database file ``path`` holds; a StorageDamagedError if SQLite finds it
    damaged, a ValidationError if it is not a memoryd database this version can use.
    Messages name it ``label`` (what it will be called), else ``path``."""
    name = label or path
    pragma = "integrity_check" if full else "quick_check"
    try:
        rows = [str(r[0]) for r in conn.execute(f"PRAGMA {pragma}").fetchall()]
        if rows != ["ok"]:
            raise StorageDamagedError(f"{name} is damaged: {'; '.join(rows[:5])}")
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
        if version < 1 or "memories" not in tables:
            raise ValidationError(f"{name} is not a memoryd database")
        if version > len(migration_scripts()):
            raise ValidationError(
                f"{name} was written by a newer memoryd (schema {version}); upgrade first"
            )
        memories = int(conn.execute("SELECT COUNT(*) FROM memories").fetchone()[0])
    except sqlite3.DatabaseError as exc:
        raise StorageDamagedError(f"{name} is damaged: {exc}") from exc
    return Snapshot(path, path.stat().st_size, memories, version)


def backup(database: Path, target: Path) -> Snapshot:
    """Copy ``database`` (with what its WAL holds) to ``target``, consistent while it is in use.

    ``target`` may be a directory: the copy is named ``memoryd-<UTC time>.db`` in it.
    An existing file at ``target`` is replaced only once the new copy is checked.
    """
    if target.is_dir():
        target = target / f"{database.stem}-{_stamp()}{database.suffix}"
    if target.resolve() == database.resolve():
        raise ValidationError("the backup cannot be the database itself")
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".{target.name}.partial")
    partial.unlink(missing_ok=True)
    try:
        with closing(_connect(database)) as source:
            _verify(source, database, full=False)  # a damaged source must not replace a backup
            with closing(sqlite3.connect(partial, isolation_level=None)) as copy:
                source.backup(copy)  # one step: one snapshot, however the server writes
                copy.execute("PRAGMA journal_mode = DELETE")  # one self-contained file
                _verify(copy, partial, full=False, label=target)
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
    with closing(_connect(target, read_only=True)) as done:
        return _verify(done, target, full=False)


@dataclass(frozen=True)
class Restored:
    snapshot: Snapshot
    moved_aside: list[Path]


def restore(source: Path, database: Path) -> Restored:
    """Make ``database`` a copy of the backup ``source``, checked in full first.

    The files it replaces (the database, its WAL and shared memory) are moved
    aside with a ``.replaced-<time>`` suffix, never deleted. Run it with the
    server stopped: a server still running on the old file notices the swap
    and stops writing.
    """
    with source.open("rb") as head:  # a file of another kind is a wrong file, not damage
        if head.read(len(SQLITE_HEADER)) != SQLITE_HEADER:
            raise ValidationError(
                f"{source} is not a memoryd backup (not an SQLite database): give a file "
                "`memoryd backup` made"
            )
    with closing(_connect(source, read_only=True)) as conn:
        checked = _verify(conn, source, full=True)
    database.parent.mkdir(parents=True, exist_ok=True)
    incoming = database.with_name(f".{database.name}.restoring")
    incoming.unlink(missing_ok=True)
    try:
        with (
            closing(_connect(source, read_only=True)) as conn,
            closing(sqlite3.connect(incoming, isolation_level=None)) as copy,
        ):
            conn.backup(copy)
            copy.execute("PRAGMA journal_mode = WAL")  # as the store keeps it
            _verify(copy, incoming, full=False, label=database)
        aside = database.with_name(f"{database.name}.replaced-{_stamp()}")
        moved = []
        for suffix in ("", *SIDE_FILES):
            current = Path(f"{database}{suffix}")
            if current.exists():
                current.rename(Path(f"{aside}{suffix}"))
                moved.append(Path(f"{aside}{suffix}"))
        os.replace(incoming, database)
    finally:
        incoming.unlink(missing_ok=True)
    Database(database).close()  # opens as the store will (migrating an older backup), marks it
    snapshot = Snapshot(database, database.stat().st_size, checked.memories, checked.version)
    return Restored(snapshot, moved)


def check(database: Path, *, full: bool = True, must_exist: bool = True) -> list[str]:
    """SQLite's integrity check of ``database`` (and its full-text indexes when ``full``).

    A lost database (its home's marker or WAL still there) is a StorageDamagedError;
    no database at all is a ValidationError, or nothing to check without ``must_exist``.
    """
    refuse_lost_database(database, database.with_suffix(MARKER_SUFFIX))
    if not database.exists():
        if must_exist:
            raise ValidationError(f"there is no memoryd database at {database}")
        return []
    store = Database(database)
    try:
        return store.integrity(full=full)
    finally:
        store.close()
