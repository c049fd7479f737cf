"""``memoryd migrate``: a SQLite home into PostgreSQL and back, losslessly and resumably."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from memoryd.config import load_settings
from memoryd.embed.local import LocalEmbedder
from memoryd.portability import export_lines
from memoryd.service import MemoryService
from memoryd.store import DB_FILENAME, SQLiteStore
from memoryd.store.postgres import PostgresStore, migrate
from memoryd.store.search import INDEX_TOKEN
from memoryd.tenancy.tenants import Tenants

QUERIES = ("what is the dog called", "coffee in the morning", "where does my sister live")


def memoryd(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The real command line, as a person runs it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORYD_")}
    env.update(MEMORYD_HOME=str(home), COLUMNS="200", NO_COLOR="1")
    return subprocess.run(
        [sys.executable, "-m", "memoryd.cli", "--json", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def populate(home: Path, embedder: LocalEmbedder) -> tuple[str, list[dict[str, Any]]]:
    """A home with memories, history, sessions, a shared team space and an API key."""
    with MemoryService(home, embedder=embedder) as svc:
        dog = svc.add("The user's dog is named Biscuit", tags=["pets"], category="entities")
        svc.add("I prefer dark roast coffee in the morning")
        sister = svc.add("My sister lives in Lisbon")
        svc.update(sister.id, content="My sister moved to Porto")
        gone = svc.add("A note to forget")
        svc.delete(gone.id)
        svc.ingest(
            [
                {"role": "user", "content": "Our cat Miso sleeps on the radiator"},
                {"role": "assistant", "content": "Noted: Miso likes warm spots"},
            ],
            session_id="s1",
        )
        team = svc.spaces.create("family", "team")
        svc.sharing.share(dog.id, team.id)
        _, secret = Tenants(svc.engine).create_key(svc.tenant_id, "laptop")
        return secret, list(export_lines(svc))


def searches(svc: MemoryService) -> list[list[str]]:
    return [[r.memory.id for r in svc.search(q, touch=False).results] for q in QUERIES]


def on_postgres(url: str, home: Path, embedder: LocalEmbedder) -> MemoryService:
    return MemoryService(settings=load_settings(home, database_url=url), embedder=embedder)


def test_a_home_moves_to_postgres_and_back_unchanged(
    tmp_path: Path, postgres_url: str, embedder: LocalEmbedder, home: Path
) -> None:
    secret, exported = populate(home, embedder)
    with MemoryService(home, embedder=embedder) as svc:
        found = searches(svc)
        with svc.engine.sqlite_store.write() as conn:  # saved index rows this file vouches for
            svc.engine.sqlite_store.set_meta(conn, f"{INDEX_TOKEN}{svc.space_id}", "token")

    moved = memoryd(home, "migrate", "--to", postgres_url)
    assert moved.returncode == 0, moved.stderr
    report = json.loads(moved.stdout)
    assert report["copied"]["memories"] == 7 and report["resumed"] is False  # a shared copy too

    with on_postgres(postgres_url, tmp_path / "server", embedder) as svc:
        assert list(export_lines(svc)) == exported
        assert searches(svc) == found
        tenant, key = Tenants(svc.engine).authenticate(secret)
        assert (tenant.id, key.name) == (svc.tenant_id, "laptop")
        assert [s.name for s in svc.spaces.list_spaces()][-1] == "family"
        assert svc.store.get_meta(f"{INDEX_TOKEN}{svc.space_id}") is None  # not its rows

    # a second run into the same database is refused, not doubled
    again = memoryd(home, "migrate", "--to", postgres_url)
    assert again.returncode == 1
    assert "already holds memories" in json.loads(again.stdout)["error"]["message"]

    back_home = tmp_path / "back"
    back = memoryd(back_home, "migrate", "--from", postgres_url)
    assert back.returncode == 0, back.stderr
    with MemoryService(back_home, embedder=embedder) as svc:
        assert list(export_lines(svc)) == exported
        assert searches(svc) == found


def test_an_interrupted_copy_resumes_without_duplicates(
    postgres_url: str, embedder: LocalEmbedder, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    populate(home, embedder)
    monkeypatch.setattr(migrate, "BATCH", 2)
    source = SQLiteStore(home / DB_FILENAME)
    pg = PostgresStore(postgres_url)

    def stop_in_memories(table: str, n: int) -> None:
        if table == "memories":
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        migrate.copy(pg, source, to_postgres=True, progress=stop_in_memories)
    assert pg.one("SELECT COUNT(*) FROM memories") == (2,)  # the first batch is in
    result = migrate.copy(pg, source, to_postgres=True)
    assert result.resumed and result.copied["memories"] == 5  # the rest
    for table in ("memories", "memory_history", "session_messages", "api_keys", "spaces"):
        rows = source.conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
        assert pg.one(f"SELECT COUNT(*) FROM {table}") == (rows,), table
    pg.close()
    source.close()


def test_migrate_names_one_direction_and_an_existing_home(tmp_path: Path) -> None:
    both = memoryd(tmp_path / "h", "migrate")
    assert both.returncode == 1 and "--to URL" in json.loads(both.stdout)["error"]["message"]
    missing = memoryd(tmp_path / "h", "migrate", "--to", "postgresql://localhost/x")
    assert missing.returncode == 1
    assert "no memoryd database" in json.loads(missing.stdout)["error"]["message"]
