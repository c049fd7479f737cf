"""The HNSW graph a space switches to past ``hnsw_threshold`` vectors.

The graph only proposes candidates: every answer must be the exact index's
answer restricted to live rows, scored with the exact cosine. Random unit
vectors in the model's 384 dimensions are the hard case for a graph (real
embeddings cluster), so recall measured on them is a floor.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from memoryd.config import load_settings
from memoryd.embed.local import LocalEmbedder
from memoryd.models import utcnow
from memoryd.service import MemoryService
from memoryd.store import index_graph
from memoryd.store.filters import MemoryFilter
from memoryd.store.hnsw_index import HnswGraph
from memoryd.store.index_arrays import IndexRow
from memoryd.store.vector_index import SpaceIndex, VectorIndex

DIM = 384
NOW = 1_700_000_000_000_000  # microseconds


def unit(rng: np.random.Generator, n: int, dim: int = DIM) -> npt.NDArray[np.float32]:
    x = rng.standard_normal((n, dim)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def rows(vectors: npt.NDArray[np.float32], first: int = 1, **kw: Any) -> list[IndexRow]:
    fields: dict[str, Any] = {"invalidated_at": None, "valid_to": None, "expires_at": None}
    fields.update(kw)
    return [
        IndexRow(rowid=first + i, vector=v, alive=True, **fields) for i, v in enumerate(vectors)
    ]


def pair(vectors: npt.NDArray[np.float32], threshold: int) -> tuple[SpaceIndex, SpaceIndex]:
    """The same rows in an exact index and in one that switched to HNSW."""
    exact = SpaceIndex(dim=DIM)
    approx = SpaceIndex(dim=DIM, hnsw_threshold=threshold)
    for index in (exact, approx):
        index.apply(rows(vectors))
    assert exact.graph is None
    assert approx.graph is not None
    return exact, approx


@pytest.fixture(scope="module")
def corpus() -> npt.NDArray[np.float32]:
    return unit(np.random.default_rng(20240611), 5000)


@pytest.fixture(scope="module")
def indexes(corpus: npt.NDArray[np.float32]) -> tuple[SpaceIndex, SpaceIndex]:
    return pair(corpus, threshold=1000)


def test_recall_against_the_exact_top_10(
    corpus: npt.NDArray[np.float32], indexes: tuple[SpaceIndex, SpaceIndex]
) -> None:
    exact, approx = indexes
    queries = unit(np.random.default_rng(7), 50)
    found = 0
    for q in queries:
        truth = dict(exact.search(q, 10))
        graph_hits = approx._search_graph(q, 10, None)
        assert graph_hits is not None  # the graph answered, no fallback
        assert graph_hits == approx.search(q, 10)
        found += len(set(truth) & {r for r, _ in graph_hits})
        # scores are the exact cosine of the returned rows, best first
        for rowid, score in graph_hits:
            assert score == pytest.approx(float(corpus[rowid - 1] @ q), abs=1e-5)
        scores = [s for _, s in graph_hits]
        assert scores == sorted(scores, reverse=True)
    assert found / (10 * len(queries)) >= 0.95


def test_a_filtered_search_returns_only_allowed_rows_with_exact_scores(
    corpus: npt.NDArray[np.float32], indexes: tuple[SpaceIndex, SpaceIndex]
) -> None:
    """A filter keeping 6 % of the rows goes through the graph (more candidates, filtered):
    approximate like any graph search, so held to recall, while every row it returns is
    allowed and scored exactly. Narrower filters are exact: test_hnsw_persist.py."""
    exact, approx = indexes
    rng = np.random.default_rng(3)
    allowed = np.sort(rng.choice(np.arange(1, 5001, dtype=np.int64), 300, replace=False))
    found = 0
    queries = unit(rng, 10)
    for q in queries:
        want = exact.search(q, 10, live_at=NOW, allowed=allowed)
        got = approx.search(q, 10, live_at=NOW, allowed=allowed)
        assert len(got) == 10 and set(r for r, _ in got) <= set(allowed.tolist())
        for rowid, score in got:
            assert score == pytest.approx(float(corpus[rowid - 1] @ q), abs=1e-5)
        assert [s for _, s in got] == sorted((s for _, s in got), reverse=True)
        found += len({r for r, _ in got} & {r for r, _ in want})
    assert found / (10 * len(queries)) >= 0.95


def test_dead_and_expired_rows_are_never_returned() -> None:
    rng = np.random.default_rng(11)
    vectors = unit(rng, 3000)
    approx = SpaceIndex(dim=DIM, hnsw_threshold=1000)
    approx.apply(rows(vectors))
    assert approx.graph is not None
    deleted = list(range(1, 101))
    expired = list(range(101, 201))
    superseded = list(range(201, 301))
    not_yet = list(range(301, 401))
    updates = [IndexRow(r, None, False, None, None, None) for r in deleted]
    updates += [IndexRow(r, vectors[r - 1], True, None, None, NOW - 1) for r in expired]
    updates += [IndexRow(r, vectors[r - 1], True, NOW - 5, None, None) for r in superseded]
    updates += [IndexRow(r, vectors[r - 1], True, None, None, None, NOW + 1) for r in not_yet]
    approx.apply(updates)
    assert len(approx.graph) == 2900  # deleted rows left the graph; the rest stay
    hidden = set(deleted + expired + superseded + not_yet)
    for r in sorted(hidden)[::7]:
        q = vectors[r - 1]  # the hidden row would be its own best match
        graph_hits = approx._search_graph(q, 10, NOW)
        assert graph_hits is not None
        assert hidden.isdisjoint(rowid for rowid, _ in graph_hits)
        assert hidden.isdisjoint(rowid for rowid, _ in approx.search(q, 10, live_at=NOW))
    # history (no live_at) still sees the expired rows, never the deleted ones
    for r in (expired[0], superseded[0], not_yet[0]):
        assert approx.search(vectors[r - 1], 1)[0][0] == r
    assert approx.search(vectors[deleted[0] - 1], 1)[0][0] != deleted[0]


def test_a_creation_window_is_the_exact_answer_within_it() -> None:
    """created_after / created_before are kept by the index itself (no SQL over the rows):
    the exact index answers the brute-force top 10 of the rows created in [after, before),
    the graph only rows of the window, with their exact scores, and nearly the same ones."""
    rng = np.random.default_rng(17)
    vectors = unit(rng, 3000)
    exact, approx = SpaceIndex(dim=DIM), SpaceIndex(dim=DIM, hnsw_threshold=1000)
    for index in (exact, approx):
        index.apply(
            [
                IndexRow(i + 1, v, True, None, None, None, created_at=NOW + i)
                for i, v in enumerate(vectors)
            ]
        )
    assert approx.graph is not None
    for after, before in ((NOW + 500, None), (None, NOW + 2000), (NOW + 1000, NOW + 1100)):
        inside = np.arange(3000)
        if after is not None:
            inside = inside[NOW + inside >= after]
        if before is not None:
            inside = inside[NOW + inside < before]
        found = 0
        for q in unit(rng, 10):
            scores = vectors[inside] @ q
            want = [int(inside[i]) + 1 for i in np.argsort(-scores)[:10]]
            got = exact.search(q, 10, live_at=NOW + 5000, created=(after, before))
            assert [r for r, _ in got] == want
            graph_hits = approx.search(q, 10, live_at=NOW + 5000, created=(after, before))
            assert len(graph_hits) == 10
            for rowid, score in graph_hits:
                assert (rowid - 1) in set(inside.tolist())
                assert score == pytest.approx(float(vectors[rowid - 1] @ q), abs=1e-6)
            found += len(set(want) & {r for r, _ in graph_hits})
        assert found / 100 >= 0.9
    # the window is on creation, the live check on validity: both hold at once
    expired = IndexRow(1001, vectors[1000], True, None, None, NOW + 1, created_at=NOW + 1000)
    for index in (exact, approx):
        index.apply([expired])
        got = index.search(vectors[1000], 3, live_at=NOW + 5000, created=(NOW + 1000, None))
        assert 1001 not in [r for r, _ in got]


def test_a_choice_of_memory_types_is_kept_by_the_index_itself() -> None:
    """The index knows each row's memory type: a search for some types answers from the rows
    of those types alone, exactly over a few (2 %: scored by position) and through the graph
    over many (60 %: more candidates, filtered), with allowed rows on top when both apply."""
    rng = np.random.default_rng(19)
    vectors = unit(rng, 3000)
    kinds = rng.choice([0, 1, 2], size=3000, p=[0.02, 0.6, 0.38])
    exact, approx = SpaceIndex(dim=DIM), SpaceIndex(dim=DIM, hnsw_threshold=1000)
    for index in (exact, approx):
        index.apply(
            [
                IndexRow(i + 1, v, True, None, None, None, kind=int(k))
                for i, (v, k) in enumerate(zip(vectors, kinds, strict=True))
            ]
        )
    assert approx.graph is not None
    allowed = np.arange(1, 3001, 2, dtype=np.int64)  # the odd rowids
    for wanted in ([0], [1], [0, 2]):
        inside = np.flatnonzero(np.isin(kinds, wanted))
        both = inside[(inside + 1) % 2 == 1]
        found = 0
        for q in unit(rng, 10):
            want = [int(inside[i]) + 1 for i in np.argsort(-(vectors[inside] @ q))[:10]]
            assert [r for r, _ in exact.search(q, 10, live_at=NOW, kinds=wanted)] == want
            got = approx.search(q, 10, live_at=NOW, kinds=wanted)
            assert len(got) == 10 and all(int(kinds[r - 1]) in wanted for r, _ in got)
            for rowid, score in got:
                assert score == pytest.approx(float(vectors[rowid - 1] @ q), abs=1e-5)
            found += len(set(want) & {r for r, _ in got})
            got = approx.search(q, 10, live_at=NOW, allowed=allowed, kinds=wanted)
            assert len(got) == min(10, both.size)
            assert all(r % 2 == 1 and int(kinds[r - 1]) in wanted for r, _ in got)
        assert found / 100 >= 0.9
    # a row whose type changes moves with it
    first = int(np.flatnonzero(kinds == 0)[0]) + 1
    for index in (exact, approx):
        index.apply([IndexRow(first, vectors[first - 1], True, None, None, None, kind=1)])
        assert first not in [r for r, _ in index.search(vectors[first - 1], 5, kinds=[0])]
        assert index.search(vectors[first - 1], 1, kinds=[1])[0][0] == first
    assert exact.search(vectors[0], 5, kinds=[]) == []


def test_too_few_live_candidates_fall_back_to_the_exact_scan() -> None:
    rng = np.random.default_rng(5)
    vectors = unit(rng, 1500)
    exact, approx = (SpaceIndex(dim=DIM), SpaceIndex(dim=DIM, hnsw_threshold=1000))
    for index in (exact, approx):
        index.apply(rows(vectors[:1480], expires_at=NOW - 1))  # all but 20 have expired
        index.apply(rows(vectors[1480:], first=1481))
    assert approx.graph is not None
    q = unit(rng, 1)[0]
    assert approx._search_graph(q, 15, NOW) is None
    got = approx.search(q, 15, live_at=NOW)
    assert got == exact.search(q, 15, live_at=NOW)
    assert {r for r, _ in got} <= set(range(1481, 1501))


def test_switches_on_past_the_threshold_and_off_below_half() -> None:
    rng = np.random.default_rng(13)
    vectors = unit(rng, 130)
    index = VectorIndex(DIM, hnsw_threshold=100).space("s")
    index.apply(rows(vectors[:100]))
    assert index.graph is None  # at the threshold: still exact
    index.apply(rows(vectors[100:101], first=101))
    assert index.graph is not None and len(index.graph) == 101
    index.apply(rows(vectors[101:], first=102))  # later rows join the graph
    assert len(index.graph) == 130
    for r in (1, 101, 130):
        assert index._search_graph(vectors[r - 1], 1, NOW) == [(r, pytest.approx(1.0, abs=1e-5))]
    # a re-embedded row moves in the graph too
    moved = unit(rng, 1)[0]
    index.apply([IndexRow(7, moved, True, None, None, None)])
    assert len(index.graph) == 130
    hits = index._search_graph(moved, 1, NOW)
    assert hits is not None and hits[0][0] == 7
    # shrinking to half the threshold keeps the graph; below half drops it
    index.apply([IndexRow(r, None, False, None, None, None) for r in range(1, 81)])
    assert index.graph is not None and len(index.graph) == 50
    index.apply([IndexRow(81, None, False, None, None, None)])
    assert index.graph is None
    assert index.search(vectors[99], 1)[0][0] == 100


def test_a_large_graph_is_built_aside_while_the_space_is_scanned_exactly(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A bulk load does not make the next search wait for the graph: it is built on a
    thread of its own and taken in, patched with what was written meanwhile."""
    monkeypatch.setattr(index_graph, "BUILD_ASIDE_ROWS", 150)
    rng = np.random.default_rng(17)
    vectors = unit(rng, 350)
    release = threading.Event()
    built = HnswGraph.add

    def held(self: HnswGraph, rowids: Any, batch: Any, threads: int | None = None) -> None:
        release.wait(timeout=30)  # the build waits until the test has written meanwhile
        built(self, rowids, batch, threads)

    monkeypatch.setattr(HnswGraph, "add", held)
    index = VectorIndex(DIM, hnsw_threshold=100).space("s")
    index.apply(rows(vectors[:300], seq=1), seq=1)
    assert index.graph is None and index.aside is not None
    # exact meanwhile: every answer the exact one
    assert index.search(vectors[41], 1)[0] == (42, pytest.approx(1.0, abs=1e-5))
    # written while it builds: a row gone, a row moved, new rows
    moved = unit(rng, 1)[0]
    index.apply([IndexRow(5, None, False, None, None, None, seq=2)], seq=2)
    index.apply([IndexRow(9, moved, True, None, None, None, seq=3)], seq=3)
    monkeypatch.setattr(HnswGraph, "add", built)
    index.apply(rows(vectors[300:], first=301, seq=4), seq=4)
    release.set()
    assert index.aside is not None
    index.aside.result(timeout=30)
    index.adopt_built()
    assert index.graph is not None and index.graph_origin == "built"
    keys = set(index.graph.keys().tolist())
    assert keys == set(range(1, 351)) - {5}
    hits = index._search_graph(moved, 1, NOW)
    assert hits is not None and hits[0][0] == 9
    # the last row, moved into the removed row's place while a new row took its own: the
    # build read the new row's vector there, and the patch put the last row's back
    hits = index._search_graph(vectors[299], 1, NOW)
    assert hits is not None and hits[0][0] == 300


def test_never_switches_without_a_threshold() -> None:
    index = VectorIndex(DIM, hnsw_threshold=None).space("s")
    index.apply(rows(unit(np.random.default_rng(1), 300)))
    assert index.graph is None


def test_graph_on_its_own() -> None:
    vectors = unit(np.random.default_rng(17), 200, dim=16)
    graph = HnswGraph(16)
    assert graph.search(vectors[0], 5).size == 0
    graph.add(np.arange(10, 210, dtype=np.int64), vectors)
    assert len(graph) == 200
    assert graph.search(vectors[3], 1).tolist() == [13]
    graph.remove(np.array([13, 9999], dtype=np.int64))  # unknown rowids are ignored
    assert 13 not in graph.search(vectors[3], 50).tolist()
    graph.add(np.array([13], dtype=np.int64), vectors[3:4])
    assert graph.search(vectors[3], 1).tolist() == [13]


def test_the_graph_library_loads_beside_the_bundled_model() -> None:
    """usearch 2.26.2 to 2.26.6 wheels crash onnxruntime when loaded before it.

    Their statically linked C++ runtime clashes with the one onnxruntime uses:
    the process dies with SIGSEGV while onnxruntime initialises. pyproject pins
    usearch below 2.26.2; this guards a future bump. A child process, since a
    crash would take pytest down with it.
    """
    script = (
        "import usearch.index\n"
        "from memoryd.embed.local import LocalEmbedder\n"
        "print(LocalEmbedder().embed(['hello']).shape)\n"
    )
    child = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert child.returncode == 0, child.stderr[-2000:]
    assert child.stdout.strip() == "(1, 384)"


# ---------------------------------------------------------------- through the service
FACTS = [
    f"{who} {verb} {what}"
    for who in ("My neighbour", "The accountant", "Our landlord", "My old teacher", "The vet")
    for verb in ("collects", "is allergic to", "keeps talking about")
    for what in (
        "vintage typewriters",
        "strawberries",
        "Formula 1 racing",
        "sourdough bread",
    )
]
TARGET = "My sister Olga moved to Reykjavik, where she teaches piano"


@pytest.fixture
def small_threshold(home: Path, embedder: LocalEmbedder) -> Iterator[MemoryService]:
    svc = MemoryService(settings=load_settings(home, hnsw_threshold=50), embedder=embedder)
    yield svc
    svc.close()


def test_search_through_the_service_after_the_switch(
    small_threshold: MemoryService, monkeypatch: pytest.MonkeyPatch
) -> None:
    svc = small_threshold
    answered: list[bool] = []
    graph_search = SpaceIndex._search_graph

    def spy(self: SpaceIndex, *args: Any) -> list[tuple[int, float]] | None:
        found = graph_search(self, *args)
        answered.append(found is not None)
        return found

    monkeypatch.setattr(SpaceIndex, "_search_graph", spy)
    assert len(FACTS) == 60
    for fact in FACTS[:40]:
        svc.add(fact)
    svc.search("strawberries", touch=False)
    assert svc.store.index is not None
    space = svc.store.index.space(svc.space_id)
    assert space.graph is None and answered == []
    for fact in FACTS[40:]:
        svc.add(fact)
    target = svc.add(TARGET)

    hits = svc.search("Which city does my sister live in?", limit=5, touch=False).results
    assert space.graph is not None and len(space.graph) == 61
    assert answered and all(answered)
    assert hits[0].memory.id == target.id

    # the vector leg alone: the target is the nearest memory, by its exact cosine
    query = svc.embed(["Which city does my sister live in?"])[0]
    (rowid,) = svc.store.conn.execute(
        "SELECT rowid FROM memories WHERE id = ?", (target.id,)
    ).fetchone()
    live = MemoryFilter(live_at=utcnow())
    vector_hits = svc.store.vector_search(svc.tenant_id, svc.space_id, query, 5, live)
    assert vector_hits[0][0] == rowid
    assert vector_hits[0][1] == pytest.approx(float(svc.embed([TARGET])[0] @ query), abs=1e-5)

    svc.delete(target.id)
    vector_hits = svc.store.vector_search(svc.tenant_id, svc.space_id, query, 5, live)
    assert rowid not in {r for r, _ in vector_hits}
    assert len(space.graph) == 60
    after = svc.search("Which city does my sister live in?", limit=5, touch=False).results
    assert target.id not in {h.memory.id for h in after}
