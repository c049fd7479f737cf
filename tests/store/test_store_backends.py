"""The store protocol on both backends: the same calls, the same answers.

SQLite is a file in the test's directory; PostgreSQL a fresh database on the
run's real server (pgserver: PostgreSQL 16 with pgvector).
"""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Iterator
from importlib import resources
from pathlib import Path

import numpy as np
import psycopg
import pytest

from memoryd.embed.local import LocalEmbedder
from memoryd.errors import StorageError, StorageReadOnlyError
from memoryd.models import Memory, personal_space
from memoryd.store import DB_FILENAME, MemoryFilter, SQLiteStore, Store
from memoryd.store.postgres import PostgresStore, tasks
from memoryd.store.postgres.database import describe

OWN = f"{socket.gethostname()}:{os.getpid()}"
TENANT = "t1"
SPACE = personal_space(TENANT)


@pytest.fixture
def store(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Store]:
    opened: Store = (
        SQLiteStore(tmp_path / DB_FILENAME)
        if backend == "sqlite"
        else PostgresStore(request.getfixturevalue("postgres_url"))
    )
    opened.ensure_tenant(TENANT, TENANT, SPACE)
    yield opened
    opened.close()


def remember(store: Store, embedder: LocalEmbedder, *texts: str, **fields: object) -> list[Memory]:
    memories = [
        Memory(content=t, tenant_id=TENANT, space_id=SPACE, **fields)  # type: ignore[arg-type]
        for t in texts
    ]
    store.insert_memories(memories, embedder.embed(list(texts)))
    return memories


def ids(store: Store, found: list[tuple[int, float]]) -> list[str]:
    rows = store.by_rowids([r for r, _ in found])
    return [rows[r].id for r, _ in found]


def test_both_legs_find_the_same_memories(store: Store, embedder: LocalEmbedder) -> None:
    store.bind_embedding_model(embedder.name, embedder.dim)
    cat, coffee, deploy = remember(
        store,
        embedder,
        "我的猫叫小白",
        "I prefer dark roast coffee in the mornings",
        "The deploy pipeline runs on Kubernetes",
    )
    live = MemoryFilter()
    # keywords: an English stem, a two-character Chinese word, a lone character
    assert ids(store, store.bm25_search(TENANT, SPACE, "roasting coffees", 5, live)) == [coffee.id]
    assert ids(store, store.bm25_search(TENANT, SPACE, "猫叫什么", 5, live)) == [cat.id]
    assert ids(store, store.bm25_search(TENANT, SPACE, "猫", 5, live)) == [cat.id]
    assert store.bm25_search(TENANT, SPACE, "giraffe", 5, live) == []
    # vectors: the nearest first, similarities as cosine
    query = embedder.embed(["which container platform do we deploy to"])[0]
    found = store.vector_search(TENANT, SPACE, query, 3, live)
    assert ids(store, found)[0] == deploy.id
    assert 0.0 < found[0][1] <= 1.0 and found[0][1] > found[1][1]
    # a narrow filter still finds what passes it
    narrow = MemoryFilter(ids=[cat.id])
    assert ids(store, store.vector_search(TENANT, SPACE, query, 3, narrow)) == [cat.id]
    # another tenant's search of this space gets nothing
    store.ensure_tenant("t2", "t2", personal_space("t2"))
    assert store.vector_search("t2", SPACE, query, 3, live) == []
    assert store.bm25_search("t2", SPACE, "coffee", 3, live) == []


def test_memories_round_trip_with_history(store: Store, embedder: LocalEmbedder) -> None:
    store.bind_embedding_model(embedder.name, embedder.dim)
    (memory,) = remember(store, embedder, "My sister lives in Lisbon", tags=["family"])
    assert store.get(TENANT, [SPACE], memory.id) == memory
    vector = store.get_vector(memory.id)
    assert vector is not None and vector.dtype == np.float32 and vector.shape == (embedder.dim,)
    changed = store.update_memory(TENANT, [SPACE], memory.id, {"content": "She moved to Porto"})
    assert changed.version == 2 and store.get(TENANT, [SPACE], memory.id) == changed
    assert [h["action"] for h in store.history(memory.id)] == ["create", "update"]
    rows, total = store.list_memories(TENANT, [SPACE], MemoryFilter(tags=["family"]))
    assert total == 1 and rows[0].content == "She moved to Porto"
    assert store.list_memories(TENANT, [SPACE], MemoryFilter(tags=["work"])) == ([], 0)
    assert store.memory_ids_like(TENANT, [SPACE], memory.id[:6], 5) == [memory.id]


def test_a_run_finishes_only_the_claim_it_holds(store: Store) -> None:
    with store.write() as conn:
        store.record_task(conn, "t1", TENANT, SPACE, "import", "queued", {}, {"n": 1})
    first = store.claim_task(f"{OWN}/0", "import")
    assert first is not None and first["attempts"] == 1
    store.requeue_task("t1", {"post_process": True})
    assert not store.finish_task("t1", f"{OWN}/0", "completed", {"done": 1}, [])
    task = store.get_task(TENANT, "t1")
    assert task is not None and task["status"] == "queued"
    again = store.claim_task(f"{OWN}/1", "import")
    assert again is not None and again["payload"] == {"n": 1, "post_process": True}
    assert store.claim_task(f"{OWN}/2", "import") is None  # nothing else is queued
    assert store.finish_task("t1", f"{OWN}/1", "completed", {"done": 2}, [])
    task = store.get_task(TENANT, "t1")
    assert task is not None and (task["status"], task["done"]) == ("completed", 2)


def test_a_running_import_holds_up_only_another_import_of_its_space(store: Store) -> None:
    """A long import does not starve the space's smart ingest or consolidation; two imports,
    or two reconciling tasks, still take turns."""
    with store.write() as conn:
        for task_id, kind in (("i1", "import"), ("i2", "import"), ("g1", "ingest")):
            store.record_task(conn, task_id, TENANT, SPACE, kind, "queued", {}, {})
        store.record_task(conn, "c1", TENANT, SPACE, "consolidate", "queued", {}, {})
    assert (store.claim_task(f"{OWN}/0", "import") or {}).get("id") == "i1"
    assert store.claim_task(f"{OWN}/1", "import") is None  # an import at a time
    assert (store.claim_task(f"{OWN}/2", "ingest") or {}).get("id") == "g1"  # not held up
    assert store.claim_task(f"{OWN}/3", "consolidate") is None  # waits for the ingest
    assert store.finish_task("g1", f"{OWN}/2", "completed", {}, [])
    assert (store.claim_task(f"{OWN}/3", "consolidate") or {}).get("id") == "c1"


def test_concurrent_claims_run_each_task_once_and_one_per_space(postgres_url: str) -> None:
    """Eight threads on two pools (two servers) claim 40 tasks of 4 spaces at once."""
    servers = [PostgresStore(postgres_url), PostgresStore(postgres_url)]
    spaces = [f"space-{n}" for n in range(4)]
    with servers[0].write() as conn:
        for n in range(40):
            servers[0].record_task(conn, f"task-{n}", TENANT, spaces[n % 4], "ingest", "queued", {})
    claimed: list[str] = []
    overlap: list[str] = []
    running: set[str] = set()
    lock = threading.Lock()

    def work(store: Store, name: str) -> None:
        while True:
            task = store.claim_task(name, "ingest")
            if task is None:
                if all(store.open_task(TENANT, s, "ingest") is None for s in spaces):
                    return
                continue
            with lock:
                if task["space_id"] in running:
                    overlap.append(task["space_id"])
                running.add(task["space_id"])
                claimed.append(task["id"])
            time.sleep(0.002)  # the work: a second claim of the space would land here
            with lock:
                running.discard(task["space_id"])
            assert store.finish_task(task["id"], name, "completed", {}, [])

    threads = [
        threading.Thread(target=work, args=(servers[n % 2], f"host{n % 2}:1/{n}")) for n in range(8)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    for server in servers:
        server.close()
    assert sorted(claimed) == sorted(f"task-{n}" for n in range(40))
    assert overlap == []


def killed(store: PostgresStore, survivor: PostgresStore) -> None:
    """``store``'s connections drop, as when its process is killed; returns once PostgreSQL
    has ended their sessions (it does so a moment after a client goes, later on a busy
    machine), so their advisory locks, the leases, are gone."""
    store.close()
    deadline = time.monotonic() + 30
    query = (
        "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' "
        "AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
    )
    while (survivor.one(query) or (0,))[0] and time.monotonic() < deadline:
        time.sleep(0.02)


def test_a_dead_servers_task_goes_to_another_and_a_live_ones_does_not(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A lease shows a live worker on any host: process ids cannot, across machines."""
    monkeypatch.setattr(tasks, "ORPHAN_CHECK_S", 0.0)  # every claim looks for orphans
    one, two = PostgresStore(postgres_url), PostgresStore(postgres_url)
    try:
        with one.write() as conn:
            one.record_task(conn, "t1", TENANT, SPACE, "ingest", "queued", {})
        assert one.claim_task("host-a:1/0", "ingest") is not None
        # the other server, told every worker is dead, still leaves a leased task alone
        assert two.requeue_orphans(lambda worker: False, "ingest") == (0, [])
        assert two.claim_task("host-b:2/0", "ingest") is None
        killed(one, two)
        taken = two.claim_task("host-b:2/0", "ingest")
        assert taken is not None and (taken["id"], taken["attempts"]) == ("t1", 2)
        assert two.finish_task("t1", "host-b:2/0", "completed", {}, [])
    finally:
        two.close()


def test_claims_of_other_kinds_do_not_hold_back_a_kinds_orphan_check(postgres_url: str) -> None:
    """A server's import and consolidation workers claim through the same store as its
    ingest worker: their orphan checks must not stand in for the ingest one."""
    one, two = PostgresStore(postgres_url), PostgresStore(postgres_url)
    try:
        with one.write() as conn:
            one.record_task(conn, "t1", TENANT, SPACE, "ingest", "queued", {})
        assert one.claim_task("host-a:1/0", "ingest") is not None
        assert two.claim_task("host-b:2/0", "ingest") is None  # leased: left alone
        killed(one, two)
        time.sleep(tasks.ORPHAN_CHECK_S + 0.1)
        for kind in ("import", "consolidate"):  # polled first, as a server's workers do
            assert two.claim_task("host-b:2/1", kind) is None
        taken = two.claim_task("host-b:2/0", "ingest")
        assert taken is not None and taken["id"] == "t1"
    finally:
        two.close()


def test_two_servers_on_one_database_see_each_others_writes(
    postgres_url: str, embedder: LocalEmbedder
) -> None:
    one, two = PostgresStore(postgres_url), PostgresStore(postgres_url)
    try:
        for server in (one, two):
            server.bind_embedding_model(embedder.name, embedder.dim)
        one.ensure_tenant(TENANT, TENANT, SPACE)
        (memory,) = remember(one, embedder, "The office wifi password rotates monthly")
        query = embedder.embed(["how often does the wifi password change"])[0]
        assert ids(two, two.vector_search(TENANT, SPACE, query, 1, MemoryFilter())) == [memory.id]
        assert two.get(TENANT, [SPACE], memory.id) == memory
    finally:
        one.close()
        two.close()


def test_an_unreachable_database_names_its_host_and_database(postgres_server: str) -> None:
    with pytest.raises(StorageError) as refused:
        PostgresStore("postgresql://memoryd@127.0.0.1:1/records?connect_timeout=2")
    assert 'database "records" on 127.0.0.1:1' in refused.value.message
    assert "MEMORYD_DATABASE_URL" in refused.value.message
    missing = postgres_server.replace("/postgres?", "/no_such_db?", 1)
    with pytest.raises(StorageError) as wrong:
        PostgresStore(missing)
    assert 'database "no_such_db"' in wrong.value.message
    assert "no_such_db" in wrong.value.message.split(":", 2)[-1]


def test_messages_never_show_the_password() -> None:
    assert describe("postgresql://u:hunter2@db.example:5433/mem") == (
        'database "mem" on db.example:5433'
    )


def test_servers_starting_together_migrate_once(postgres_server: str) -> None:
    name = "memoryd_concurrent_start"
    with psycopg.connect(postgres_server, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    url = postgres_server.replace("/postgres?", f"/{name}?", 1)
    stores: list[PostgresStore] = []
    errors: list[BaseException] = []

    def start() -> None:
        try:
            stores.append(PostgresStore(url))
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=start) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for store in stores:
        store.close()
    assert errors == [] and len(stores) == 3
    with psycopg.connect(url) as conn:
        applied = conn.execute("SELECT name FROM schema_migrations ORDER BY name").fetchall()
    scripts = resources.files("memoryd.store.postgres.migrations").iterdir()
    assert applied == sorted((p.name,) for p in scripts if p.name.endswith(".sql"))
    with psycopg.connect(postgres_server, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE {name} WITH (FORCE)")


def test_a_read_only_postgres_database_takes_no_write_and_says_so(postgres_url: str) -> None:
    """A standby or a database set read-only: PostgreSQL's own refusal becomes a 503
    storage_read_only, never a 500."""
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("SET default_transaction_read_only = on")
        with pytest.raises(psycopg.errors.ReadOnlySqlTransaction) as refused:
            conn.execute("INSERT INTO meta(key, value) VALUES ('probe', 'x')")
    store = PostgresStore(postgres_url)
    try:
        error = store.error(refused.value)
    finally:
        store.close()
    assert isinstance(error, StorageReadOnlyError)
    assert error.http_status == 503 and error.code == "storage_read_only"
    assert "reads go on" in error.message
