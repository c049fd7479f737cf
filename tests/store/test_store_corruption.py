"""A damaged database file is refused with a clear error and never made worse."""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
from pathlib import Path

import pytest

from memoryd.embed.local import LocalEmbedder
from memoryd.errors import StorageDamagedError, StorageError
from memoryd.service import MemoryService
from memoryd.store import DB_FILENAME


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _valid_store(home: Path, embedder: LocalEmbedder, n: int = 40) -> list[str]:
    """A closed, checkpointed store holding ``n`` memories; returns their ids."""
    with MemoryService(home, embedder=embedder) as svc:
        ids = [
            svc.add(f"memory number {i} about the garden shed and its tools").id for i in range(n)
        ]
    assert not (home / f"{DB_FILENAME}-wal").exists() or (
        (home / f"{DB_FILENAME}-wal").stat().st_size == 0
    )
    return ids


def _root_page(db: Path, table: str) -> tuple[int, int]:
    conn = sqlite3.connect(db)
    try:
        page_size = conn.execute("PRAGMA page_size").fetchone()[0]
        (root,) = conn.execute(
            "SELECT rootpage FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)
        ).fetchone()
    finally:
        conn.close()
    return int(root), int(page_size)


def _clobber_page(db: Path, page: int, page_size: int) -> None:
    data = bytearray(db.read_bytes())
    data[(page - 1) * page_size : page * page_size] = b"\x5a" * page_size
    db.write_bytes(bytes(data))


@pytest.mark.parametrize(
    "garbage",
    [os.urandom(8192), b"hello", b"x" * 100, b"SQLite format 3\x00" + b"\xff" * 4080],
    ids=["random-8k", "tiny", "short", "bad-header"],
)
def test_garbage_file_is_refused_and_left_untouched(home: Path, garbage: bytes) -> None:
    home.mkdir(parents=True)
    db = home / DB_FILENAME
    db.write_bytes(garbage)
    with pytest.raises(StorageError) as info:
        MemoryService(home)
    message = str(info.value)
    assert str(db) in message
    assert "restore it from an export or move it aside" in message
    assert db.read_bytes() == garbage


def test_valid_store_overwritten_with_garbage_later_is_refused(
    home: Path, embedder: LocalEmbedder
) -> None:
    _valid_store(home, embedder, n=3)
    db = home / DB_FILENAME
    garbage = os.urandom(db.stat().st_size)
    db.write_bytes(garbage)
    with pytest.raises(StorageError, match=r"cannot open|not a usable") as info:
        MemoryService(home, embedder=embedder)
    assert str(db) in str(info.value)
    assert db.read_bytes() == garbage


@pytest.mark.parametrize("damage", ["truncated", "header-zeroed", "pages-after-first"])
def test_corrupted_copy_is_refused_and_original_is_untouched(
    home: Path, tmp_path: Path, embedder: LocalEmbedder, damage: str
) -> None:
    ids = _valid_store(home, embedder)
    original = home / DB_FILENAME
    before = _digest(original)
    copy_home = tmp_path / "copy"
    copy_home.mkdir()
    copy = copy_home / DB_FILENAME
    data = original.read_bytes()
    if damage == "truncated":
        data = data[: len(data) // 2]
    elif damage == "header-zeroed":
        data = b"\x00" * 100 + data[100:]
    else:
        data = data[:4096] + os.urandom(len(data) - 4096)
    copy.write_bytes(data)

    with pytest.raises(StorageError) as info:
        MemoryService(copy_home, embedder=embedder)
    assert str(copy) in str(info.value)
    assert copy.read_bytes() == data  # the failed open wrote nothing into the file
    assert _digest(original) == before
    # the original store is still whole and usable
    with MemoryService(home, embedder=embedder) as svc:
        assert {m.id for m in svc.list_memories(limit=100)[0]} == set(ids)


def test_corrupted_tenants_table_is_a_storage_error_on_open(
    home: Path, tmp_path: Path, embedder: LocalEmbedder
) -> None:
    _valid_store(home, embedder, n=3)
    copy_home = tmp_path / "copy"
    copy_home.mkdir()
    copy = copy_home / DB_FILENAME
    shutil.copyfile(home / DB_FILENAME, copy)
    root, page_size = _root_page(copy, "tenants")
    _clobber_page(copy, root, page_size)
    damaged = copy.read_bytes()
    with pytest.raises(StorageDamagedError, match="memoryd restore"):
        MemoryService(copy_home, embedder=embedder)
    assert copy.read_bytes() == damaged


def test_corrupted_memories_table_is_a_storage_error_on_use(
    home: Path, tmp_path: Path, embedder: LocalEmbedder
) -> None:
    _valid_store(home, embedder)
    copy_home = tmp_path / "copy"
    copy_home.mkdir()
    copy = copy_home / DB_FILENAME
    shutil.copyfile(home / DB_FILENAME, copy)
    root, page_size = _root_page(copy, "memories")
    _clobber_page(copy, root, page_size)
    svc = MemoryService(copy_home, embedder=embedder)
    try:
        with pytest.raises(StorageError):
            svc.list_memories()
        with pytest.raises(StorageError):
            svc.search("garden shed tools")
        with pytest.raises(StorageError):
            svc.add("a new memory into a damaged store")
    finally:
        svc.close()


def test_empty_file_opens_as_a_new_store(home: Path, embedder: LocalEmbedder) -> None:
    home.mkdir(parents=True)
    (home / DB_FILENAME).write_bytes(b"")
    with MemoryService(home, embedder=embedder) as svc:
        memory = svc.add("an empty file is a new database, not a corrupt one")
        assert svc.get(memory.id).content == memory.content


def test_directory_in_place_of_the_file_is_a_storage_error(home: Path) -> None:
    (home / DB_FILENAME).mkdir(parents=True)
    with pytest.raises(StorageError) as info:
        MemoryService(home)
    assert str(home / DB_FILENAME) in str(info.value)


def test_foreign_sqlite_database_is_refused_without_losing_its_data(home: Path) -> None:
    home.mkdir(parents=True)
    db = home / DB_FILENAME
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE memories (id INTEGER PRIMARY KEY, note TEXT)")
    conn.execute("INSERT INTO memories (note) VALUES ('somebody else''s data')")
    conn.commit()
    dump_before = list(conn.iterdump())
    conn.close()

    header_before = db.read_bytes()[:100]
    with pytest.raises(StorageError, match="database of another program") as info:
        MemoryService(home)
    assert str(db) in str(info.value)
    # not even the journal mode in the header was switched
    assert db.read_bytes()[:100] == header_before
    conn = sqlite3.connect(db)
    try:
        assert list(conn.iterdump()) == dump_before
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 0
    finally:
        conn.close()


def test_a_home_that_held_data_never_opens_empty(home: Path, embedder: LocalEmbedder) -> None:
    _valid_store(home, embedder, n=2)
    marker = home / "memoryd.home"
    assert "memoryd restore" in marker.read_text(encoding="utf-8")
    db = home / DB_FILENAME
    db.write_bytes(b"")
    with pytest.raises(StorageDamagedError, match=r"is empty \(0 bytes\)"):
        MemoryService(home, embedder=embedder)
    db.unlink()
    with pytest.raises(StorageDamagedError, match="is missing"):
        MemoryService(home, embedder=embedder)
    assert not db.exists()
    marker.unlink()  # starting afresh on purpose
    with MemoryService(home, embedder=embedder) as svc:
        assert svc.list_memories()[1] == 0
    assert marker.exists()


def test_damage_found_in_use_turns_the_store_read_only(
    home: Path, tmp_path: Path, embedder: LocalEmbedder
) -> None:
    _valid_store(home, embedder, n=3)
    with MemoryService(home, embedder=embedder) as svc:
        kept = svc.add("written before the damage")
        db = home / DB_FILENAME
        db.rename(tmp_path / "elsewhere.db")
        with pytest.raises(StorageDamagedError, match="was removed while in use"):
            svc.add("written after")
        assert svc.get(kept.id).content == "written before the damage"  # reads go on
        damage = svc.store.storage_damage()
        assert damage is not None and "saved as memoryd.db.rescued-" in damage.message
        with pytest.raises(StorageDamagedError):
            svc.delete(kept.id)
