"""How a damaged or lost database is recognised (the store acts on it in ``database.py``).

SQLite says when a file is damaged; a lost one it cannot tell from a new
home, so a home that held a database keeps a marker beside it.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from memoryd.errors import StorageDamagedError

# memoryd.db's marker is memoryd.home: its being there says the home held a database
MARKER_SUFFIX = ".home"
# SQLite's primary result codes for a damaged file
SQLITE_CORRUPT = 11
SQLITE_NOTADB = 26
# … and for a write that cannot happen now, the file being sound
SQLITE_READONLY = 8
SQLITE_FULL = 13
MARKER_TEXT = """\
This directory holds a memoryd database ({db}), first opened {at}.

While this file is here, memoryd refuses to start with {db} missing or empty,
so that a lost database is never silently replaced by a new, empty one.
Restore a backup with `memoryd restore BACKUP`; to start afresh on purpose,
delete this file (and any {db}-wal left beside it).
"""


def is_damage(exc: sqlite3.DatabaseError) -> bool:
    """SQLite's word that the file is damaged (not busy, not full, not a bad query)."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None and code & 0xFF in (SQLITE_CORRUPT, SQLITE_NOTADB):
        return True
    # memoryd only ever writes valid UTF-8: text that is not was changed under it
    return str(exc).startswith("Could not decode to UTF-8")


def primary_code(exc: sqlite3.DatabaseError) -> int | None:
    code = getattr(exc, "sqlite_errorcode", None)
    return None if code is None else code & 0xFF


def damage_detail(exc: sqlite3.DatabaseError) -> str:
    """SQLite's words for the damage, without the damaged text itself (it is someone's memory)."""
    if str(exc).startswith("Could not decode to UTF-8"):
        return "a stored text is not valid UTF-8"
    return str(exc)


def file_identity(path: Path) -> tuple[int, int]:
    stat = os.stat(path)
    return stat.st_dev, stat.st_ino


def refuse_lost_database(path: Path, marker: Path) -> None:
    """Refuse a missing or empty database where a home held one (its marker, or its WAL)."""
    if path.exists() and not path.is_file():
        return  # a directory in its place: connecting says so
    size = path.stat().st_size if path.exists() else None
    if size:
        return
    wal = path.with_name(path.name + "-wal")
    left_wal = wal.exists() and wal.stat().st_size > 0
    if not marker.exists() and not left_wal:
        return  # a new home
    what = "is missing" if size is None else "is empty (0 bytes)"
    evidence = (
        f"its write-ahead log {wal.name} is still there"
        if left_wal
        else (f"{marker.name} says it held one")
    )
    raise StorageDamagedError(
        f"{path} {what}, but this home held a memoryd database ({evidence}); memoryd will "
        "not start an empty store in its place. Restore a backup with `memoryd restore "
        f"BACKUP`, or, to start afresh on purpose, move {marker.name} and any {wal.name} aside"
    )
