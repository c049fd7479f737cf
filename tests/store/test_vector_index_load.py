"""What the in-process vector index holds, whether it was loaded whole or caught up.

A new process fills its index from the store's columns in one pass
(``SpaceIndex.load``), and then catches up row by row (``apply``): both must
hold exactly the rows a search may return (active, with a vector, not tool
output), because the search filters rely on it.
"""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import numpy.typing as npt
import pytest

from memoryd.embed.local import LocalEmbedder
from memoryd.errors import StorageError
from memoryd.models import TOOL_OUTPUT_MARK, Memory, State, utcnow
from memoryd.service import MemoryService
from memoryd.store.filters import MemoryFilter

KINDS = ("live", "archived", "tool output", "expired")


def _unit(n: int, dim: int) -> npt.NDArray[np.float32]:
    x = np.random.default_rng(42).standard_normal((n, dim)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def _memory(svc: MemoryService, kind: str) -> Memory:
    memory = Memory(content=f"a {kind} memory", tenant_id=svc.tenant_id, space_id=svc.space_id)
    if kind == "archived":
        memory.state = State.ARCHIVED
    elif kind == "tool output":
        memory.marks = [TOOL_OUTPUT_MARK]
    elif kind == "expired":
        memory.expires_at = utcnow() - timedelta(days=1)
    return memory


def _found(svc: MemoryService, vector: npt.NDArray[np.float32], live: bool) -> list[str]:
    f = MemoryFilter(live_at=utcnow() if live else None)
    hits = svc.store.vector_search(svc.tenant_id, svc.space_id, vector, 5, f)
    found = svc.store.by_rowids([r for r, _ in hits])
    return [found[r].content for r, _ in hits]


@pytest.mark.parametrize("path", ["loaded whole", "caught up"])
def test_the_index_holds_only_what_a_search_may_return(
    home: object, embedder: LocalEmbedder, path: str
) -> None:
    vectors = _unit(len(KINDS), embedder.dim)
    with MemoryService(embedder=embedder) as svc:
        assert svc.embedder is embedder  # binds the store to the model: the index exists
        if path == "caught up":  # the index is filled first, the rows come after
            assert _found(svc, vectors[0], live=True) == []
            index = svc.engine.sqlite_store.index
            assert index is not None and index.space(svc.space_id).seq >= 0
        memories = [_memory(svc, kind) for kind in KINDS]
        svc.store.insert_memories(memories, list(vectors), actor="test")
        index = svc.engine.sqlite_store.index
        assert index is not None
        for kind, vector in zip(KINDS, vectors, strict=True):
            # each row is its own best match: found only if the index holds it
            history = _found(svc, vector, live=False)
            now = _found(svc, vector, live=True)
            if kind in ("live", "expired"):
                assert history[0] == f"a {kind} memory"
            else:
                assert f"a {kind} memory" not in history
            assert ("a expired memory" in now) is False
        assert index.space(svc.space_id).size == 2  # the live and the expired rows


def test_a_stored_vector_of_another_size_is_a_clear_error(
    home: object, embedder: LocalEmbedder
) -> None:
    with MemoryService(embedder=embedder) as svc:
        assert svc.embedder is embedder
        svc.store.insert_memories([_memory(svc, "live")], [_unit(1, embedder.dim)[0]], actor="test")
        with svc.engine.sqlite_store.write() as conn:
            conn.execute("UPDATE memories SET vector = zeroblob(12)")
    with MemoryService(embedder=embedder) as svc, pytest.raises(StorageError, match="reindex"):
        assert svc.embedder is embedder
        _found(svc, _unit(1, embedder.dim)[0], live=True)
