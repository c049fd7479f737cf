"""The HNSW graph kept beside the database: loaded by the next process, patched, or rebuilt.

A graph only proposes candidates, so a stale or damaged one could cost
recall, never correctness; these tests hold it to more: a graph that cannot
be trusted is not used at all, and one that is used holds exactly the live
rows.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from memoryd.config import load_settings
from memoryd.embed.local import LocalEmbedder
from memoryd.service import MemoryService
from memoryd.store.index_arrays import IndexRow
from memoryd.store.vector_index import SpaceIndex, VectorIndex

DIM = 384
THRESHOLD = 500
NOW = 1_700_000_000_000_000


def unit(rng: np.random.Generator, n: int) -> npt.NDArray[np.float32]:
    x = rng.standard_normal((n, DIM)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def rows(vectors: npt.NDArray[np.float32], first: int = 1, seq: int = 1) -> list[IndexRow]:
    return [IndexRow(first + i, v, True, None, None, None, seq=seq) for i, v in enumerate(vectors)]


@pytest.fixture(scope="module")
def corpus() -> npt.NDArray[np.float32]:
    return unit(np.random.default_rng(5), 1500)


def opened(graph_dir: Path, model: str = "model-a") -> SpaceIndex:
    """A space as a new process opens it: an empty index over the same graph folder."""
    return VectorIndex(DIM, THRESHOLD, graph_dir=graph_dir, model=model).space("space-1")


def saved(space: SpaceIndex, held: list[IndexRow], seq: int) -> SpaceIndex:
    """``space`` caught up to ``held`` at ``seq``, then kept on disk as the store does."""
    space.apply(held, seq=seq)
    assert space.save_due()
    space.save()
    return space


def keys(space: SpaceIndex) -> set[int]:
    assert space.graph is not None
    return set(space.graph.keys().tolist())


def test_a_built_graph_is_saved_and_the_next_process_loads_it(
    tmp_path: Path, corpus: npt.NDArray[np.float32]
) -> None:
    first = saved(opened(tmp_path), rows(corpus), 10)
    assert first.graph_origin == "built" and first.unsaved == 0
    # the rows are kept only for spaces of ROWS_FILE_MIN rows (tests/store/test_index_rows_file.py)
    assert sorted(p.name.split(".", 1)[1] for p in tmp_path.iterdir()) == [
        "usearch",
        "usearch.json",
    ]

    second = opened(tmp_path)
    second.apply(rows(corpus), seq=10)
    assert second.graph_origin == "loaded" and second.unsaved == 0
    for q in unit(np.random.default_rng(9), 20):
        assert second.search(q, 10) == first.search(q, 10)


def test_writes_after_the_save_are_patched_into_the_loaded_graph(
    tmp_path: Path, corpus: npt.NDArray[np.float32]
) -> None:
    saved(opened(tmp_path), rows(corpus), 10)
    rng = np.random.default_rng(13)
    now = rows(corpus)  # what the store holds by seq 20:
    for row in now[:50]:  # deleted or archived since the save
        row.alive = False
    moved = unit(rng, 10)  # re-embedded since the save (a content update)
    for row, vector in zip(now[100:110], moved, strict=True):
        row.vector, row.seq = vector, 20
    added = rows(unit(rng, 40), first=len(corpus) + 1, seq=20)  # new since the save

    space = opened(tmp_path)
    space.apply(now + added, seq=20)
    assert space.graph_origin == "loaded"
    assert keys(space) == {r.rowid for r in now + added if r.alive}
    for row, vector in zip(now[100:110], moved, strict=True):
        hits = space._search_graph(vector, 1, None)  # the graph itself holds the new vector
        assert hits is not None and hits[0][0] == row.rowid
    found = {r for q in unit(rng, 20) for r, _ in space.search(q, 20)}
    assert not found & {r.rowid for r in now[:50]}


@pytest.mark.parametrize("damage", ["truncated", "rewritten", "other model", "newer than db"])
def test_a_graph_that_cannot_be_trusted_is_rebuilt(
    tmp_path: Path, corpus: npt.NDArray[np.float32], damage: str
) -> None:
    kept = saved(opened(tmp_path), rows(corpus), 10)
    graph = next(tmp_path.glob("*.usearch"))
    model, seq = "model-a", 10
    if damage == "truncated":  # a crash mid-write of a file that was then renamed
        with graph.open("r+b") as fh:
            fh.truncate(graph.stat().st_size // 2)
    elif damage == "rewritten":  # the same size, other bytes: the description no longer fits
        graph.write_bytes(b"\0" * graph.stat().st_size)
    elif damage == "other model":
        model = "model-b"
    else:  # a backup restored: the database is behind the graph
        seq = 5

    space = opened(tmp_path, model)
    space.apply(rows(corpus), seq=seq)
    assert space.graph_origin == "built"
    assert keys(space) == set(range(1, len(corpus) + 1))
    # a new graph, not the saved one: as good as the saved one against the exact top 10
    # (two builds of one corpus may differ where neighbours are near ties)
    queries = unit(np.random.default_rng(21), 10)
    exact = [set(np.argsort(-(corpus @ q))[:10] + 1) for q in queries]
    for index in (space, kept):
        found = [{r for r, _ in index.search(q, 10)} for q in queries]
        assert sum(len(f & e) for f, e in zip(found, exact, strict=True)) >= 0.9 * 10 * 10
    # and it saves the rebuilt graph for the next one
    space.save()
    assert json.loads(graph.with_name(graph.name + ".json").read_text())["model"] == model


def test_a_graph_without_its_description_is_not_used(
    tmp_path: Path, corpus: npt.NDArray[np.float32]
) -> None:
    saved(opened(tmp_path), rows(corpus), 10)
    for meta in tmp_path.glob("*.json"):
        meta.unlink()  # a crash between writing the graph and describing it
    space = opened(tmp_path)
    space.apply(rows(corpus), seq=10)
    assert space.graph_origin == "built"


def test_filters_on_a_large_space_use_the_graph_or_the_rows_they_keep(
    tmp_path: Path, corpus: npt.NDArray[np.float32]
) -> None:
    exact = SpaceIndex(dim=DIM)
    exact.apply(rows(corpus))
    space = opened(tmp_path)
    space.apply(rows(corpus), seq=1)
    rng = np.random.default_rng(17)
    ids = np.arange(1, len(corpus) + 1, dtype=np.int64)
    narrow = np.sort(rng.choice(ids, 45, replace=False))  # 3 %: scored exactly, by position
    wide = np.sort(rng.choice(ids, 750, replace=False))  # 50 %: the graph, 2x the candidates
    found = 0
    queries = unit(rng, 20)
    for q in queries:
        assert space.search(q, 10, NOW, narrow) == exact.search(q, 10, NOW, narrow)
        graph_hits = space._search_graph(q, 10, NOW, wide)
        assert graph_hits is not None and graph_hits == space.search(q, 10, NOW, wide)
        assert {r for r, _ in graph_hits} <= set(wide.tolist())
        found += len({r for r, _ in graph_hits} & {r for r, _ in exact.search(q, 10, NOW, wide)})
    assert found / (10 * len(queries)) >= 0.95


def test_the_store_keeps_its_graphs_beside_the_database(
    home: Path, embedder: LocalEmbedder
) -> None:
    settings = load_settings(home, hnsw_threshold=20)
    facts = [f"Note {i}: the build server number {i} runs job {i * 7}" for i in range(30)]
    with MemoryService(settings=settings, embedder=embedder) as svc:
        for fact in facts:
            svc.add(fact)
        first = [r.memory.id for r in svc.search("build server 12", touch=False).results]
        assert svc.store.index is not None
        assert svc.store.index.space(svc.space_id).graph_origin == "built"
    assert list((home / "memoryd.db-graphs").glob("*.usearch"))
    with MemoryService(settings=settings, embedder=embedder) as svc:
        again = [r.memory.id for r in svc.search("build server 12", touch=False).results]
        assert svc.store.index is not None
        assert svc.store.index.space(svc.space_id).graph_origin == "loaded"
    assert again == first
