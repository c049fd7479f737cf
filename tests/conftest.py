"""Shared fixtures: real SQLite files in temporary homes, the real bundled model, and a
real PostgreSQL server (with pgvector) for the tests that run on both backends."""

from __future__ import annotations

import itertools
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from memoryd.embed.local import LocalEmbedder
from memoryd.service import MemoryService

PROXY_VARS = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")


@pytest.fixture(autouse=True)
def no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test talks to loopback only (servers, the scripted LLM): never through a proxy.

    httpx honours the proxy variables of the machine, and so do the
    processes a test starts, which inherit this environment.
    """
    for name in PROXY_VARS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")


@pytest.fixture(scope="session")
def embedder() -> LocalEmbedder:
    """One loaded model for the whole run: loading it is the slow part."""
    return LocalEmbedder()


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "home"
    monkeypatch.setenv("MEMORYD_HOME", str(path))
    monkeypatch.delenv("MEMORYD_CONFIG", raising=False)
    monkeypatch.delenv("MEMORYD_DATABASE_URL", raising=False)
    return path


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """One PostgreSQL 16 with pgvector for the run (the ``pgserver`` package), and a
    template database migrated once: each test copies it (``postgres_url``)."""
    import pgserver
    import psycopg

    from memoryd.store.postgres.store import PostgresStore

    # not under pytest's temporary root: as root, pgserver runs PostgreSQL as its own user,
    # which must reach the data directory, and each pytest run makes that root private again
    data = Path(tempfile.mkdtemp(prefix="memoryd-postgres-"))
    server = pgserver.get_server(data, cleanup_mode="delete")
    uri = server.get_uri()
    with psycopg.connect(uri, autocommit=True) as conn:
        conn.execute("CREATE DATABASE memoryd_template")
    PostgresStore(_database(uri, "memoryd_template")).close()
    yield uri
    server.cleanup()


_DATABASES = itertools.count()


def _database(uri: str, name: str) -> str:
    """``uri`` (pgserver's, on the default database) pointed at database ``name``."""
    return uri.replace("/postgres?", f"/{name}?", 1)


@pytest.fixture
def postgres_url(postgres_server: str) -> Iterator[str]:
    """A fresh memoryd database for one test (a copy of the migrated template)."""
    import psycopg

    name = f"memoryd_test_{next(_DATABASES)}"
    with psycopg.connect(postgres_server, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name} TEMPLATE memoryd_template")
    yield _database(postgres_server, name)
    with psycopg.connect(postgres_server, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE {name} WITH (FORCE)")


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest) -> str:
    """Run the test on each backend (``on_backend`` points the home at it)."""
    return str(request.param)


@pytest.fixture
def service(home: Path, embedder: LocalEmbedder) -> Iterator[MemoryService]:
    svc = MemoryService(home, embedder=embedder)
    yield svc
    svc.close()


@pytest.fixture(name="STAGES")
def stages() -> list[str]:
    """The 16 stage names of a default-recipe search trace, in order."""
    return [
        "parallel_search",
        "convex_fusion",
        "speaker_match",
        "date_match",
        "rrf_normalize",
        "session_support",
        "neighbour_support",
        "min_score_filter",
        "topk_cap",
        "cross_encoder",
        "bm25_floor",
        "decay_boost",
        "importance_weight",
        "length_norm",
        "hard_cutoff",
        "mmr_diversity",
    ]
