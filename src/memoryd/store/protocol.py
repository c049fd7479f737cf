"""The store protocol: what the service and its stages call on a backend.

The service, the retriever, the task worker, imports, spaces and tenants see
the store only through :class:`Store`, so a second backend (PostgreSQL, in
``memoryd.store.postgres``) plugs in beside the embedded SQLite one. The
protocol is split by area so a backend's coverage can be stated (and checked
by mypy) area by area; :class:`Store` is all of them.

What stays outside it is SQLite's own: raw SQL over the file (the context
engine's tables, ``reindex``), integrity checks, backups and restores.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Protocol

from memoryd.errors import StorageDamagedError, StorageError
from memoryd.models import (
    ApiKey,
    AutoShareRule,
    MemberStatus,
    Memory,
    Role,
    Space,
    SpaceType,
    State,
    Tenant,
)
from memoryd.store.filters import MemoryFilter
from memoryd.store.hnsw_index import DEFAULT_HNSW_THRESHOLD
from memoryd.store.scopes import Viewer
from memoryd.store.sessions import RawMessage

if TYPE_CHECKING:
    # annotations only: a command that reads the store (memoryd list) never loads NumPy
    import numpy as np
    import numpy.typing as npt

# A backend's transaction handle (sqlite3.Connection, psycopg.Connection): it comes
# from ``write()`` or ``read()`` and goes back into the same store's methods only.
Tx = Any


class Transactions(Protocol):
    """A transaction handle, the schema's metadata and the embedding model the store holds.

    ``write()`` is one write transaction, rolled back whole on any error; ``read()``
    one consistent snapshot. The handle they yield (``Tx``) goes back only into
    methods of the same store that take ``conn``, so several calls share it."""

    def write(self) -> AbstractContextManager[Tx]: ...
    def read(self) -> AbstractContextManager[Tx]: ...
    def close(self) -> None: ...
    def storage_damage(self) -> StorageDamagedError | None: ...
    def storage_problem(self) -> StorageError | None: ...
    def get_meta(self, key: str) -> str | None: ...
    def take_turn(self, job: str, every_s: float) -> bool: ...
    def bind_embedding_model(
        self, name: str, dim: int, hnsw_threshold: int | None = DEFAULT_HNSW_THRESHOLD
    ) -> None: ...
    def embedding_bound(self) -> bool: ...


class MemoryRecords(Protocol):
    """Memories and their history, always scoped by tenant and spaces."""

    def insert_memories(
        self,
        memories: Sequence[Memory],
        vectors: npt.NDArray[np.float32] | Sequence[npt.NDArray[np.float32] | None],
        actor: str | None = None,
        conn: Tx | None = None,
        created: bool = True,
    ) -> None: ...
    def update_memory(
        self,
        tenant_id: str,
        space_ids: Sequence[str],
        memory_id: str,
        changes: dict[str, Any],
        vector: npt.NDArray[np.float32] | None = None,
        action: str = "update",
        actor: str | None = None,
    ) -> Memory: ...
    def supersede(
        self,
        old: Memory,
        new: Memory,
        vector: npt.NDArray[np.float32],
        actor: str | None = None,
    ) -> Memory: ...
    def set_state_where(
        self,
        tenant_id: str,
        space_ids: Sequence[str],
        f: MemoryFilter,
        state: State,
        actor: str | None = None,
    ) -> int: ...
    def touch(self, memory_ids: Sequence[str], at_us: int) -> None: ...
    def add_marks(self, memory_id: str, marks: Sequence[str]) -> None: ...
    def get(
        self,
        tenant_id: str,
        space_ids: Sequence[str],
        memory_id: str,
        viewer: Viewer | None = None,
    ) -> Memory | None: ...
    def memory_ids_like(
        self,
        tenant_id: str,
        space_ids: Sequence[str],
        prefix: str,
        limit: int,
        viewer: Viewer | None = None,
    ) -> list[str]: ...
    def ids_with_prefix(
        self, table: str, column: str, prefix: str, where: str, params: Sequence[Any], limit: int
    ) -> list[str]: ...
    def memory_id_taken(self, memory_id: str) -> bool: ...
    def vectors_of(self, memory_ids: Sequence[str]) -> dict[str, npt.NDArray[np.float32]]: ...
    def get_vector(self, memory_id: str) -> npt.NDArray[np.float32] | None: ...
    def list_memories(
        self,
        tenant_id: str,
        space_ids: Sequence[str],
        f: MemoryFilter,
        sort: str = "created_at",
        order: str = "desc",
        limit: int = 20,
        offset: int = 0,
        with_total: bool = True,
    ) -> tuple[list[Memory], int]: ...
    def count(self, tenant_id: str, space_ids: Sequence[str], f: MemoryFilter) -> int: ...
    def iter_all(
        self,
        tenant_id: str,
        space_ids: Sequence[str],
        batch: int = 1000,
        viewer: Viewer | None = None,
    ) -> Iterator[Memory]: ...
    def by_rowids(self, rowids: Sequence[int]) -> dict[int, Memory]: ...
    def space_history(self, tenant_id: str, space_id: str) -> Iterator[dict[str, Any]]: ...
    def add_history(
        self, tenant_id: str, space_id: str, rows: Sequence[dict[str, Any]]
    ) -> None: ...
    def history(self, memory_id: str) -> list[dict[str, Any]]: ...


class SearchLegs(Protocol):
    """The two candidate legs of a search: (row number, score), best first.

    The vector leg scores by cosine similarity; the keyword leg's scores are only
    comparable within one answer (BM25 on SQLite, ``ts_rank`` on PostgreSQL)."""

    def vector_search(
        self,
        tenant_id: str,
        space_id: str,
        query: npt.NDArray[np.float32],
        k: int,
        f: MemoryFilter,
    ) -> list[tuple[int, float]]: ...
    def bm25_search(
        self, tenant_id: str, space_id: str, text: str, k: int, f: MemoryFilter
    ) -> list[tuple[int, float]]: ...


class TenantRecords(Protocol):
    """Tenants and their hashed API keys."""

    def ensure_tenant(self, tenant_id: str, name: str, space_id: str) -> None: ...
    def create_tenant(self, tenant: Tenant, personal_space_id: str) -> None: ...
    def get_tenant(self, tenant_id: str) -> Tenant | None: ...
    def active_tenant_ids(self) -> list[str]: ...
    def add_api_key(self, key: ApiKey, key_hash: str) -> None: ...
    def find_api_key(self, key_hash: str) -> tuple[ApiKey, Tenant] | None: ...
    def touch_api_key(self, key_id: str) -> None: ...
    def list_api_keys(self, tenant_id: str) -> list[ApiKey]: ...
    def revoke_api_key(self, tenant_id: str, key_id: str) -> ApiKey: ...
    def count_api_keys(self) -> int: ...


class SpaceRecords(Protocol):
    """Spaces, members, invitations, auto-share rules and sharing events."""

    def create_space(self, space: Space) -> Space: ...
    def get_space(self, space_id: str) -> Space | None: ...
    def spaces_of(
        self, user_id: str, status: MemberStatus = MemberStatus.ACTIVE
    ) -> list[Space]: ...
    def space_refs(self, user_id: str) -> list[tuple[str, SpaceType]]: ...
    def is_member(self, user_id: str, space_id: str) -> bool: ...
    def invited_by(self, space_id: str, user_id: str) -> str | None: ...
    def live_memory_count(self, space_id: str) -> int: ...
    def rename_space(self, space_id: str, name: str) -> Space: ...
    def delete_space(self, space_id: str) -> None: ...
    def set_member(
        self, space_id: str, user_id: str, role: Role, *, new: bool, invited_by: str = ""
    ) -> Space: ...
    def accept_invitation(self, space_id: str, user_id: str) -> Space: ...
    def remove_member(self, space_id: str, user_id: str) -> Space: ...
    def find_pair_space(self, owner_id: str, name: str, other: str) -> Space | None: ...
    def shared_copy_id(self, space_id: str, original_id: str) -> str | None: ...
    def auto_share_rules(self, space_id: str) -> list[AutoShareRule]: ...
    def rules_from(self, source_space: str) -> list[tuple[str, AutoShareRule]]: ...
    def add_auto_share_rule(self, space_id: str, rule: AutoShareRule) -> AutoShareRule: ...
    def delete_auto_share_rule(self, space_id: str, rule_id: str) -> None: ...
    def add_sharing_event(self, conn: Tx, **event: Any) -> None: ...
    def withdraw_previews(self, conn: Tx, memory_id: str, space_id: str) -> None: ...
    def sharing_events(self, user_id: str, spaces: Sequence[str], since_us: int) -> list[Any]: ...


class TaskRecords(Protocol):
    """Background tasks, claimed so that each runs once, and learned noise."""

    def record_task(
        self,
        conn: Tx,
        task_id: str,
        tenant_id: str,
        space_id: str,
        kind: str,
        status: str,
        result: dict[str, Any],
        payload: dict[str, Any] | None = None,
    ) -> None: ...
    def get_task(self, tenant_id: str, task_id: str) -> dict[str, Any] | None: ...
    def session_task_ids(self, tenant_id: str, session_id: str) -> list[str]: ...
    def open_task(self, tenant_id: str, space_id: str, kind: str) -> str | None: ...
    def claim_task(self, worker: str, kind: str) -> dict[str, Any] | None: ...
    def finish_task(
        self, task_id: str, claimant: str, status: str, result: dict[str, Any], errors: list[str]
    ) -> bool: ...
    def cancel_task(self, task_id: str, alive: Callable[[str], bool], reason: str) -> bool: ...
    def release_task(self, task_id: str, claimant: str) -> bool: ...
    def requeue_task(self, task_id: str, payload_changes: dict[str, Any]) -> None: ...
    def requeue_orphans(self, alive: Callable[[str], bool], kind: str) -> tuple[int, list[str]]: ...
    def add_learned_noise(
        self,
        tenant_id: str,
        space_id: str,
        memory_id: str,
        content: str,
        vector: npt.NDArray[np.float32],
    ) -> None: ...
    def learned_noise(self, space_id: str, limit: int) -> npt.NDArray[np.float32] | None: ...


class ImportRecords(Protocol):
    """Import tasks and the journal that lets one be rolled back."""

    def record_import(self, conn: Tx, record: dict[str, Any]) -> None: ...
    def get_import(self, tenant_id: str, import_id: str) -> dict[str, Any] | None: ...
    def list_imports(
        self, tenant_id: str, space_id: str, limit: int
    ) -> tuple[list[dict[str, Any]], int]: ...
    def import_with_hash(self, tenant_id: str, space_id: str, content_hash: str) -> str | None: ...
    def update_import(self, import_id: str, status: str | None = None, **detail: Any) -> None: ...
    def journal_size(self, import_id: str) -> int: ...
    def rollback_import(self, import_id: str) -> tuple[int, int]: ...


class SessionRecords(Protocol):
    """Verbatim session messages, the embedding cache and turns waiting for a vector."""

    def add_session_messages(
        self,
        conn: Tx,
        tenant_id: str,
        space_id: str,
        session_id: str,
        agent_id: str | None,
        messages: Sequence[RawMessage],
    ) -> list[bool]: ...
    def recent_hashes(
        self, tenant_id: str, space_id: str, digests: Sequence[str], since_us: int
    ) -> set[str]: ...
    def session_messages(
        self, tenant_id: str, space_id: str, session_id: str | None = None
    ) -> list[dict[str, Any]]: ...
    def iter_session_messages(
        self, tenant_id: str, space_id: str, batch: int = ...
    ) -> Iterator[dict[str, Any]]: ...
    def list_sessions(
        self, tenant_id: str, space_id: str, limit: int, offset: int = 0
    ) -> tuple[list[dict[str, Any]], int]: ...
    def last_session_line(self, tenant_id: str, space_id: str, session_id: str) -> str | None: ...
    def clear_sessions(self, conn: Tx, tenant_id: str, space_id: str) -> int: ...
    def cached_vectors(self, model: str, hashes: Sequence[bytes]) -> dict[bytes, bytes]: ...
    def cache_vectors(self, model: str, items: Sequence[tuple[bytes, bytes]]) -> None: ...
    def queue_embeddings(self, conn: Tx, memories: Sequence[Memory]) -> None: ...
    def pending_embeddings(self, limit: int) -> list[Memory]: ...
    def count_pending_embeddings(self) -> int: ...
    def job_counts(self) -> list[tuple[str, str, int]]: ...
    def store_bytes(self) -> int: ...
    def drop_orphan_embeddings(self) -> int: ...
    def store_embeddings(
        self, memory_ids: Sequence[str], vectors: npt.NDArray[np.float32]
    ) -> None: ...


class SettingsRecords(Protocol):
    """Per-tenant settings documents and per-memory client metadata."""

    def get_tenant_setting(self, tenant_id: str, name: str) -> dict[str, Any] | None: ...
    def put_tenant_setting(self, tenant_id: str, name: str, value: dict[str, Any]) -> None: ...
    def put_memory_metadata(
        self, tenant_id: str, memory_id: str, value: dict[str, Any]
    ) -> None: ...
    def memory_metadata(self, tenant_id: str, memory_ids: Sequence[str]) -> dict[str, Any]: ...


class Aggregates(Protocol):
    """Counts for the stats pages, computed in the database."""

    def count_by(
        self,
        tenant_id: str,
        space_ids: Sequence[str],
        column: str,
        deleted: bool = False,
        viewer: Viewer | None = None,
    ) -> dict[str, int]: ...
    def breakdown(
        self, tenant_id: str, space_ids: Sequence[str], viewer: Viewer | None = None
    ) -> list[tuple[Any, ...]]: ...
    def totals(
        self, tenant_id: str, space_ids: Sequence[str], viewer: Viewer | None = None
    ) -> dict[str, Any]: ...
    def daily_counts(
        self,
        tenant_id: str,
        space_ids: Sequence[str],
        since_us: int,
        by: str = "memory_type",
        viewer: Viewer | None = None,
    ) -> list[tuple[str, str, int]]: ...
    def tag_counts(
        self, tenant_id: str, space_ids: Sequence[str], viewer: Viewer | None = None
    ) -> list[tuple[str, int, int]]: ...
    def agent_counts(
        self, tenant_id: str, space_ids: Sequence[str], viewer: Viewer | None = None
    ) -> list[tuple[str, str, str, int, int, int]]: ...
    def shared_in(
        self, tenant_id: str, space_ids: Sequence[str], viewer: Viewer | None = None
    ) -> int: ...


class ContinuityRecords(Protocol):
    """Checkpoints and layered session memory (the continuity package)."""

    def save_checkpoint(
        self,
        tenant_id: str,
        agent_id: str,
        session_id: str,
        project: str,
        trigger: str,
        mechanical: str,
        summary: str | None,
    ) -> dict[str, Any]: ...
    def set_checkpoint_summary(
        self, tenant_id: str, checkpoint_id: str, summary: str, basis: int
    ) -> bool: ...
    def get_checkpoint(self, tenant_id: str, checkpoint_id: str) -> dict[str, Any] | None: ...
    def list_checkpoints(
        self,
        tenant_id: str,
        *,
        agent_id: str | None = None,
        session_id: str | None = None,
        project: str | None = None,
        limit: int = 20,
        offset: int = 0,
    ) -> list[dict[str, Any]]: ...
    def delete_checkpoint(self, tenant_id: str, checkpoint_id: str) -> bool: ...
    def append_raw(
        self,
        tenant_id: str,
        agent_id: str,
        session_id: str,
        project: str,
        messages: Sequence[tuple[str, str, str]],
        expires_us: int | None,
    ) -> int: ...
    def put_layer(
        self,
        tenant_id: str,
        agent_id: str,
        session_id: str,
        project: str,
        depth: int,
        content: str,
        basis: int,
        expires_us: int | None,
    ) -> dict[str, Any]: ...
    def set_layer_memory(self, tenant_id: str, layer_id: str, memory_id: str) -> None: ...
    def layer(
        self, tenant_id: str, agent_id: str, session_id: str, depth: int
    ) -> dict[str, Any] | None: ...
    def raw_window(
        self, tenant_id: str, agent_id: str, session_id: str, head: int, tail: int
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]: ...
    def session_layers(
        self, tenant_id: str, agent_id: str | None = None, session_id: str | None = None
    ) -> list[dict[str, Any]]: ...
    def stale_sessions(
        self, tenant_id: str, idle_before_us: int | None = None
    ) -> list[tuple[str, str]]: ...
    def clear_continuity(self, conn: Tx, tenant_id: str) -> int: ...
    def expire_layers(self, now_us: int) -> int: ...


class AgentTaskRecords(Protocol):
    """Collaboration tasks of agents and their members: the ``task/{id}`` scopes."""

    def create_agent_task(self, tenant_id: str, task_id: str, title: str) -> bool: ...
    def get_agent_task(self, tenant_id: str, task_id: str) -> dict[str, Any] | None: ...
    def list_agent_tasks(
        self, tenant_id: str, agent_id: str | None = None
    ) -> list[dict[str, Any]]: ...
    def join_agent_task(self, tenant_id: str, task_id: str, agent_id: str) -> None: ...
    def leave_agent_task(self, tenant_id: str, task_id: str, agent_id: str) -> bool: ...
    def delete_agent_task(self, tenant_id: str, task_id: str) -> bool: ...
    def is_task_member(self, tenant_id: str, task_id: str, agent_id: str) -> bool: ...


class Store(
    Transactions,
    MemoryRecords,
    SearchLegs,
    TenantRecords,
    SpaceRecords,
    TaskRecords,
    ImportRecords,
    SessionRecords,
    SettingsRecords,
    Aggregates,
    ContinuityRecords,
    AgentTaskRecords,
    Protocol,
):
    """Everything the service calls on a backend."""
