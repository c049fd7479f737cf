"""Copying a memoryd database between SQLite and PostgreSQL, row for row.

Every record table is copied with its keys and row numbers as they are
(memory ids and row order, history ids that import journals point at,
hashed API keys, vectors), so an export of either side is the same file.
The copy goes table by table in key order, one transaction per batch, and
each batch records how far it got in the target's ``meta`` table in the same
transaction: an interrupted copy resumes where it stopped, with nothing
copied twice. A target that already holds memories is refused unless forced.

The context engine's conversations (SQLite-only for now) are not copied;
``Migration.left_behind`` names what a source holds there.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from memoryd.errors import ValidationError
from memoryd.store.postgres.database import Conn
from memoryd.store.postgres.store import PostgresStore
from memoryd.store.rows import blob_to_vector, vector_to_blob
from memoryd.store.search import INDEX_TOKEN
from memoryd.store.sqlite import SQLiteStore

# in an order that satisfies the foreign keys
TABLES = (
    "meta",
    "tenants",
    "api_keys",
    "spaces",
    "space_members",
    "auto_share_rules",
    "memories",
    "memory_history",
    "session_messages",
    "tasks",
    "import_tasks",
    "import_changes",
    "embed_cache",
    "sharing_events",
    "learned_noise",
    "pending_embeddings",
    "tenant_settings",
    "memory_metadata",
    "checkpoints",
    "session_layers",
)
# SQLite tables with records that the PostgreSQL schema does not hold yet
NOT_COPIED = ("conversations", "context_messages", "summaries", "context_blobs", "kg_triples")
BATCH = 500
PROGRESS = "migrate:"  # meta keys of the copy's own bookkeeping: never copied
DONE = "migrate:done"
Progress = Callable[[str, int], None]


@dataclass(frozen=True)
class Column:
    name: str
    kind: str  # "json", "vector", "bool", "bytes" or "plain"
    identity: bool = False


@dataclass(frozen=True)
class Table:
    name: str
    columns: tuple[Column, ...]
    key: tuple[str, ...]  # the primary key: the copy's order and resume point


@dataclass
class Migration:
    """What a copy did: rows per table, and what the source holds that was not copied."""

    copied: dict[str, int] = field(default_factory=dict)
    left_behind: dict[str, int] = field(default_factory=dict)
    resumed: bool = False


def _kind(data_type: str, udt: str) -> str:
    if data_type == "jsonb":
        return "json"
    if udt == "vector":
        return "vector"
    return {"boolean": "bool", "bytea": "bytes"}.get(data_type, "plain")


def tables(pg: PostgresStore, sqlite: SQLiteStore) -> list[Table]:
    """The copied tables with the columns both schemas have (PostgreSQL's generated
    keyword columns and SQLite's change counter are each side's own)."""
    out = []
    for name in TABLES:
        lite = {r[1] for r in sqlite.conn.execute(f"PRAGMA table_info({name})")}
        columns = tuple(
            Column(c, _kind(t, u), identity=i == "YES")
            for c, t, u, i in pg.all(
                "SELECT column_name, data_type, udt_name, is_identity "
                "FROM information_schema.columns WHERE table_name = %s "
                "AND is_generated = 'NEVER' ORDER BY ordinal_position",
                (name,),
            )
            if c in lite
        )
        key = tuple(
            r[0]
            for r in pg.all(
                "SELECT a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid "
                "AND a.attnum = ANY(i.indkey) WHERE i.indrelid = %s::regclass AND i.indisprimary "
                "ORDER BY array_position(i.indkey, a.attnum)",
                (name,),
            )
        )
        out.append(Table(name, columns, key))
    return out


class _Side:
    """One end of a copy: batches read in key order, batches written with progress."""

    marks: str

    def count(self, table: Table) -> int:
        raise NotImplementedError

    def read(self, table: Table, after: Sequence[Any] | None) -> list[tuple[Any, ...]]:
        raise NotImplementedError

    def memories(self) -> int:
        return self.count(Table("memories", (), ("id",)))


def _where_after(table: Table, after: Sequence[Any] | None, mark: str) -> tuple[str, list[Any]]:
    if after is None:
        return "", []
    keys = ", ".join(table.key)
    marks = ", ".join(mark for _ in table.key)
    return f"WHERE ({keys}) > ({marks})", list(after)


def _select(table: Table, where: str, mark: str) -> str:
    columns = ", ".join(c.name for c in table.columns)
    order = ", ".join(table.key)
    # not the copy's own bookkeeping, nor which saved index rows the source file vouches for
    meta = (
        f" {'AND' if where else 'WHERE'} key NOT LIKE 'migrate:%%' "
        f"AND key NOT LIKE '{INDEX_TOKEN}%%'"
        if table.name == "meta"
        else ""
    )
    if mark == "?":
        meta = meta.replace("%%", "%")
    return f"SELECT {columns} FROM {table.name} {where}{meta} ORDER BY {order} LIMIT {BATCH}"


class _Postgres(_Side):
    def __init__(self, store: PostgresStore) -> None:
        self.store = store

    def count(self, table: Table) -> int:
        row = self.store.one(f"SELECT COUNT(*) FROM {table.name}")
        return 0 if row is None else int(row[0])

    def read(self, table: Table, after: Sequence[Any] | None) -> list[tuple[Any, ...]]:
        where, params = _where_after(table, after, "%s")
        rows = self.store.all(_select(table, where, "%s"), params)
        return [
            tuple(_to_sqlite(c, v) for c, v in zip(table.columns, r, strict=True)) for r in rows
        ]

    def progress(self) -> dict[str, str]:
        return dict(self.store.all("SELECT key, value FROM meta WHERE key LIKE 'migrate:%%'"))

    def write(self, table: Table, rows: list[tuple[Any, ...]], key: Sequence[Any]) -> None:
        columns = ", ".join(c.name for c in table.columns)
        marks = ", ".join("%s::jsonb" if c.kind == "json" else "%s" for c in table.columns)
        overriding = " OVERRIDING SYSTEM VALUE" if any(c.identity for c in table.columns) else ""
        with self.store.write() as conn, conn.cursor() as cur:
            cur.executemany(
                f"INSERT INTO {table.name} ({columns}){overriding} VALUES ({marks}) "
                "ON CONFLICT DO NOTHING",
                [
                    tuple(_to_postgres(c, v) for c, v in zip(table.columns, r, strict=True))
                    for r in rows
                ],
            )
            self.store.set_meta(conn, PROGRESS + table.name, _encode_key(key))

    def finish(self, tables: Sequence[Table], source: str) -> None:
        with self.store.write() as conn:
            for table in tables:
                for column in table.columns:
                    if column.identity:
                        _reset_identity(conn, table.name, column.name)
            self.store.set_meta(conn, DONE, source)


def _reset_identity(conn: Conn, table: str, column: str) -> None:
    """Rows copied with their own numbers: the next new row gets the number after them."""
    conn.execute(
        f"SELECT setval(pg_get_serial_sequence('{table}', '{column}'), "
        f"GREATEST((SELECT MAX({column}) FROM {table}), 1))"
    )


class _SQLite(_Side):
    def __init__(self, store: SQLiteStore) -> None:
        self.store = store

    def count(self, table: Table) -> int:
        return int(self.store.conn.execute(f"SELECT COUNT(*) FROM {table.name}").fetchone()[0])

    def read(self, table: Table, after: Sequence[Any] | None) -> list[tuple[Any, ...]]:
        where, params = _where_after(table, after, "?")
        return [tuple(r) for r in self.store.conn.execute(_select(table, where, "?"), params)]

    def progress(self) -> dict[str, str]:
        rows = self.store.conn.execute("SELECT key, value FROM meta WHERE key LIKE 'migrate:%'")
        return {str(k): str(v) for k, v in rows}

    def write(self, table: Table, rows: list[tuple[Any, ...]], key: Sequence[Any]) -> None:
        names = [c.name for c in table.columns]
        extra: list[str] = []
        with self.store.write() as conn:
            values = rows
            if table.name == "memories":  # the vector index catches up by this counter
                seq = self.store._bump_seq(conn)
                extra, values = ["seq"], [(*r, seq) for r in rows]
            marks = ", ".join("?" for _ in [*names, *extra])
            conn.executemany(
                f"INSERT INTO {table.name} ({', '.join([*names, *extra])}) VALUES ({marks}) "
                "ON CONFLICT DO NOTHING",
                values,
            )
            self.store.set_meta(conn, PROGRESS + table.name, _encode_key(key))

    def finish(self, tables: Sequence[Table], source: str) -> None:
        with self.store.write() as conn:
            self.store.set_meta(conn, DONE, source)


def _encode_key(key: Sequence[Any]) -> str:
    """A resume point as JSON text (binary key parts, the embedding cache's, as hex)."""
    return json.dumps([{"hex": v.hex()} if isinstance(v, bytes) else v for v in key])


def _decode_key(text: str) -> list[Any]:
    return [bytes.fromhex(v["hex"]) if isinstance(v, dict) else v for v in json.loads(text)]


def _to_postgres(column: Column, value: Any) -> Any:
    if value is None:
        return None
    if column.kind == "vector":
        return blob_to_vector(value)
    if column.kind == "bool":
        return bool(value)
    return value


def _to_sqlite(column: Column, value: Any) -> Any:
    if value is None:
        return None
    if column.kind == "vector":
        return vector_to_blob(np.asarray(value, dtype=np.float32))
    if column.kind == "bool":
        return int(value)
    if column.kind == "bytes":
        return bytes(value)
    return value


def _batches(source: _Side, table: Table, after: Sequence[Any] | None) -> Iterator[list[Any]]:
    while True:
        rows = source.read(table, after)
        if not rows:
            return
        yield rows
        positions = [next(i for i, c in enumerate(table.columns) if c.name == k) for k in table.key]
        after = [rows[-1][i] for i in positions]
        if len(rows) < BATCH:
            return


def copy(
    pg: PostgresStore,
    sqlite: SQLiteStore,
    *,
    to_postgres: bool,
    force: bool = False,
    progress: Progress | None = None,
    totals: Callable[[int], None] | None = None,
) -> Migration:
    """Copy SQLite into PostgreSQL (``to_postgres``) or back; resumes an interrupted copy."""
    plan = tables(pg, sqlite)
    source: _Postgres | _SQLite = _SQLite(sqlite) if to_postgres else _Postgres(pg)
    target: _Postgres | _SQLite = _Postgres(pg) if to_postgres else _SQLite(sqlite)
    done = target.progress()
    if DONE in done:
        done = {}  # an earlier copy finished: this one starts over (and needs --force)
    result = Migration(resumed=bool(done))
    if not done and target.memories() and not force:
        raise ValidationError(
            "the target already holds memories; memoryd migrate copies into an empty "
            "database only (--force copies anyway, keeping the rows it already has)"
        )
    _check_models(source, target, plan)
    if totals is not None:
        totals(sum(source.count(t) for t in plan))
    for table in plan:
        after = done.get(PROGRESS + table.name)
        start = None if after is None else _decode_key(after)
        if start is not None and progress is not None:  # what the interrupted copy did
            progress(table.name, min(target.count(table), source.count(table)))
        for rows in _batches(source, table, start):
            positions = [
                next(i for i, c in enumerate(table.columns) if c.name == k) for k in table.key
            ]
            target.write(table, rows, [rows[-1][i] for i in positions])
            result.copied[table.name] = result.copied.get(table.name, 0) + len(rows)
            if progress is not None:
                progress(table.name, len(rows))
    target.finish(plan, "sqlite" if to_postgres else "postgresql")
    if to_postgres:
        for name in NOT_COPIED:
            count = int(sqlite.conn.execute(f"SELECT COUNT(*) FROM {name}").fetchone()[0])
            if count:
                result.left_behind[name] = count
    return result


def _check_models(source: _Side, target: _Side, plan: list[Table]) -> None:
    """Vectors of one model must not land in a store bound to another."""
    meta = next(t for t in plan if t.name == "meta")
    models = []
    for side in (source, target):
        rows = {r[0]: r[1] for r in side.read(meta, None)}
        models.append((rows.get("embed_model"), rows.get("embed_dim")))
    (source_model, source_dim), (target_model, target_dim) = models
    if target_model and source_model and (source_model, source_dim) != (target_model, target_dim):
        raise ValidationError(
            f"the source was embedded with {source_model} ({source_dim} dimensions) and the "
            f"target with {target_model} ({target_dim}); copy into an unbound database, or "
            "`memoryd reindex` one side first"
        )
