"""PostgreSQL on a really full disk: its DiskFull is a 507 storage_full, nothing written
before is lost, and writes work again once there is room."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pgserver
import psycopg
import pytest
from full_disk import fill, small_disk

from memoryd.errors import StorageFullError
from memoryd.models import Memory, personal_space
from memoryd.store.postgres import PostgresStore

TENANT = "t1"
SPACE = personal_space(TENANT)
VECTOR = np.ones(384, dtype=np.float32) / np.sqrt(384)


def memory(text: str) -> Memory:
    return Memory(content=text, tenant_id=TENANT, space_id=SPACE)


def test_a_full_disk_under_postgres_is_storage_full() -> None:
    # not under pytest's root: PostgreSQL runs as its own user and must reach the directory
    where = Path(tempfile.mkdtemp(prefix="memoryd-pgfull-"))
    with small_disk(where, "160m"):
        server = pgserver.get_server(where / "data", cleanup_mode="delete")
        try:
            uri = server.get_uri()
            with psycopg.connect(uri, autocommit=True) as conn:
                conn.execute("CREATE DATABASE full_disk")
            store = PostgresStore(uri.replace("/postgres?", "/full_disk?", 1))
            try:
                kept = [memory(f"fact {i}") for i in range(20)]
                for m in kept:
                    store.insert_memories([m], [VECTOR])
                fill(where / "filler")
                with pytest.raises(StorageFullError) as full:
                    for i in range(300):  # the next extension of a table or index fails
                        store.insert_memories([memory(f"note {i} " + "bees " * 400)], [VECTOR])
                assert full.value.http_status == 507 and "No space left" in full.value.message
                (where / "filler").unlink()
                store.insert_memories([memory("room again")], [VECTOR])
                with psycopg.connect(uri.replace("/postgres?", "/full_disk?", 1)) as conn:
                    held = {r[0] for r in conn.execute("SELECT id FROM memories")}
                assert {m.id for m in kept} <= held
            finally:
                store.close()
        finally:
            server.cleanup()
