"""PostgreSQL for the benchmarks: a server (one given by URL, or a throwaway ``pgserver``
one in the bench's work directory), and the speed stores built in it once and copied.

A store of ``size`` memories is database ``memoryd_bench_n{size}``, filled by the
same bulk path as the SQLite stores (:func:`bench.speed.fill`) and marked complete
with a comment on the database; each measurement runs on a copy made from it as a
template, so what one run writes never reaches the next.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

import psycopg
from rich.progress import Progress

from bench.common import WORK_DIR
from memoryd.config import load_settings
from memoryd.service import MemoryService

PGSERVER = "pgserver"
COMPLETE = "memoryd bench store: complete"
# the HNSW index of 100k vectors is built in one pass when it fits in memory
BUILD_MEMORY = "1GB"


@contextmanager
def postgres(spec: str) -> Iterator[str]:
    """The URL of a PostgreSQL server: ``spec`` itself, or, for ``pgserver``, one started
    now in the bench's work directory (its data kept there, the server stopped after)."""
    if spec != PGSERVER:
        if not spec.startswith(("postgresql://", "postgres://")):
            raise ValueError(f"--database: a postgresql:// URL or {PGSERVER}, not {spec!r}")
        yield spec
        return
    from pgserver.postgres_server import get_server

    data = WORK_DIR / "postgres"
    data.parent.mkdir(parents=True, exist_ok=True)
    server = get_server(data, cleanup_mode="stop")
    try:
        yield server.get_uri()
    finally:
        server.cleanup()


def database_url(server: str, name: str) -> str:
    """``server``'s URL pointed at database ``name`` (its host, user and options kept)."""
    return urlsplit(server)._replace(path=f"/{name}").geturl()


def _admin(server: str) -> psycopg.Connection[tuple[object, ...]]:
    return psycopg.connect(database_url(server, "postgres"), autocommit=True)


def _complete(server: str, name: str) -> bool:
    with _admin(server) as conn:
        row = conn.execute(
            "SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = %s",
            (name,),
        ).fetchone()
    return row is not None and row[0] == COMPLETE


def drop_database(server: str, name: str) -> None:
    with _admin(server) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def copy_database(server: str, template: str, name: str) -> str:
    """A fresh copy of database ``template`` as ``name``; its URL."""
    drop_database(server, name)
    with _admin(server) as conn:
        conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template}" STRATEGY FILE_COPY')
    return database_url(server, name)


def database_mb(url: str) -> float:
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT pg_database_size(current_database())").fetchone()
    assert row is not None
    return round(int(row[0]) / 2**20, 1)


def memory_rows(url: str) -> int:
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT COUNT(*) FROM memories").fetchone()
    assert row is not None
    return int(row[0])


def build_pg_store(server: str, size: int, bar: Progress, embed_limit: int) -> str:
    """Database ``memoryd_bench_n{size}`` holding the speed store's memories, built once:
    the bulk load, then the model bound (which builds the HNSW index over every row)."""
    from bench.common import bench_embedder
    from bench.speed import fill

    name = f"memoryd_bench_n{size}" + (f"_e{embed_limit}" if size > embed_limit else "")
    if _complete(server, name):
        return name
    drop_database(server, name)
    with _admin(server) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
        conn.execute(f"ALTER DATABASE \"{name}\" SET maintenance_work_mem = '{BUILD_MEMORY}'")
    home = pg_home(name)
    embedder = bench_embedder()
    settings = load_settings(home, database_url=database_url(server, name))
    with MemoryService(settings=settings, embedder=embedder) as svc:
        fill(svc, size, bar, embed_limit, embedder)
        svc.engine.embedder  # noqa: B018 - binds the model: the vector index, built once here
    with _admin(server) as conn:
        conn.execute(f"COMMENT ON DATABASE \"{name}\" IS '{COMPLETE}'")
    return name


def pg_home(name: str) -> Path:
    """The (otherwise empty) home a service on database ``name`` is opened with."""
    home = WORK_DIR / "stores" / f"pg-{name}"
    home.mkdir(parents=True, exist_ok=True)
    return home
