"""An acknowledged write survives the writer being SIGKILLed mid-loop."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

from childproc import Child

from memoryd.embed.local import LocalEmbedder
from memoryd.models import MemoryType, State
from memoryd.service import MemoryService
from memoryd.store import DB_FILENAME

ACKS_BEFORE_KILL = 25
TEMPLATE = "Crash note {i}: the storage unit with code ZX{i}Q holds the winter tyres"


def _integrity(home: Path) -> str:
    conn = sqlite3.connect(home / DB_FILENAME)
    try:
        return str(conn.execute("PRAGMA integrity_check").fetchone()[0])
    finally:
        conn.close()


def test_every_acknowledged_add_survives_sigkill(
    home: Path, embedder: LocalEmbedder, spawn: Callable[[Path], Child]
) -> None:
    child = spawn(home)
    child.wait_ready()
    child.send("add_loop", template=TEMPLATE)
    acked: dict[str, int] = {}
    for _ in range(ACKS_BEFORE_KILL):
        line = child.recv()
        acked[line["ok"]] = line["i"]
    # killed mid-loop: the child is still adding when the signal lands
    assert child.proc.poll() is None
    for line in child.kill():  # flushed before the kill: acknowledged too
        acked[line["ok"]] = line["i"]
    assert len(acked) >= ACKS_BEFORE_KILL

    assert _integrity(home) == "ok"
    with MemoryService(home, embedder=embedder) as svc:
        for memory_id, i in acked.items():
            memory = svc.get(memory_id)
            assert memory.content == TEMPLATE.format(i=i)
            assert memory.state is State.ACTIVE
        # nothing half-written: every row there is a whole memory with a vector
        rows, total = svc.list_memories(limit=1000)
        assert total >= len(acked)
        for m in rows:
            vector = svc.store.get_vector(m.id)
            assert vector is not None and vector.shape == (embedder.dim,)
        # the reopened store still answers searches for the acknowledged writes
        last = max(acked, key=acked.__getitem__)
        hits = svc.search(f"storage unit code ZX{acked[last]}Q", touch=False).results
        assert last in [h.memory.id for h in hits]
        # and accepts new writes
        assert svc.get(svc.add("written after the crash").id).content == "written after the crash"


def test_every_acknowledged_ingest_batch_survives_sigkill(
    home: Path, embedder: LocalEmbedder, spawn: Callable[[Path], Child]
) -> None:
    child = spawn(home)
    child.wait_ready()
    child.send("ingest_loop")
    batches: list[dict[str, object]] = [child.recv() for _ in range(12)]
    assert child.proc.poll() is None
    batches += child.kill()

    assert _integrity(home) == "ok"
    with MemoryService(home, embedder=embedder) as svc:
        for batch in batches:
            ids = batch["ok"]
            assert isinstance(ids, list) and len(ids) == 3
            i = batch["i"]
            for memory_id in ids:
                memory = svc.get(memory_id)
                assert memory.memory_type is MemoryType.SESSION
                assert memory.session_id == f"crash-{i}"
                assert f"batch {i}:" in memory.content
            messages = svc.session_messages(f"crash-{i}")
            assert [m["memory_id"] for m in messages] == ids
        # a batch is all or nothing: no session holds a partial set of messages
        conn = svc.store.conn
        counts = conn.execute(
            "SELECT session_id, COUNT(*) FROM session_messages GROUP BY session_id"
        ).fetchall()
        assert all(n == 3 for _, n in counts)
        orphans = conn.execute(
            "SELECT COUNT(*) FROM session_messages s LEFT JOIN memories m "
            "ON m.id = s.memory_id WHERE m.id IS NULL"
        ).fetchone()[0]
        assert orphans == 0
        # re-sending an acknowledged batch after the crash stores nothing twice
        first = batches[0]
        again = svc.ingest(
            [
                {"role": "user", "content": "batch 0: my locker number is 1000"},
                {"role": "assistant", "content": "batch 0: noted, locker 1000"},
            ],
            session_id=str(first["session_id"]),
        )
        assert again.stored_count == 0
