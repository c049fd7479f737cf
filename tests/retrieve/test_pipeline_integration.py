"""The read path end to end: a real SQLite store, the real bundled model.

Covers what the stage unit tests cannot: a search leg that fails (query
embedding, BM25 index) and the other answering alone, the cross-space merge
of ``Retriever.search``, the trace's bookkeeping, and recall counting.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from memoryd.embed import Embedder, Vectors
from memoryd.embed.local import LocalEmbedder
from memoryd.errors import StorageError
from memoryd.ingest.direct import build_direct_memory
from memoryd.models import Memory, SearchTrace, SpaceType, StageTrace, utcnow
from memoryd.retrieve import Retriever, SearchRequest, SpaceRef
from memoryd.service import MemoryService
from memoryd.store import DB_FILENAME, MemoryFilter, SQLiteStore
from memoryd.store.rows import RECALL_TRUST_STEP, to_us

NOTES = [
    "The zebra at the city zoo is named Stripes",
    "I prefer dark roast coffee in the morning",
    "My sister lives in Lisbon with her two cats",
    "The team standup is at nine thirty every weekday",
    "I play tennis every Saturday afternoon",
    "Our production database runs PostgreSQL 16",
]
ZEBRA = 0  # the only note that says "zebra"


class FlakyEmbedder(Embedder):
    """The real local model, except that it fails on demand like a remote model can."""

    def __init__(self, inner: LocalEmbedder) -> None:
        self.inner = inner
        self.name = inner.name
        self.dim = inner.dim
        self.broken = False

    def _embed(self, texts: Sequence[str]) -> Vectors:
        if self.broken or any("BOOM" in t for t in texts):
            raise RuntimeError("embedding backend is down")
        return self.inner.embed(texts)


@pytest.fixture
def flaky(embedder: LocalEmbedder) -> FlakyEmbedder:
    return FlakyEmbedder(embedder)


@pytest.fixture
def flaky_service(home: Path, flaky: FlakyEmbedder) -> Iterator[MemoryService]:
    svc = MemoryService(home, embedder=flaky)
    yield svc
    svc.close()


def _seed(service: MemoryService) -> list[str]:
    return [service.add(text).id for text in NOTES]


def _stage(trace: SearchTrace, name: str) -> StageTrace:
    return next(s for s in trace.stages if s.name == name)


# ---------------------------------------------------------------------- failing legs
def test_a_failed_query_embedding_answers_from_keywords(
    flaky_service: MemoryService, caplog: pytest.LogCaptureFixture, STAGES: list[str]
) -> None:
    ids = _seed(flaky_service)

    healthy = flaky_service.search("zebra", include_trace=True, touch=False)
    assert healthy.trace is not None
    # with both legs, the vector leg alone returns every memory (no score floor at stage 1)
    assert _stage(healthy.trace, "parallel_search").output_count == len(NOTES)

    with caplog.at_level(logging.WARNING, logger="memoryd.retrieve.pipeline"):
        response = flaky_service.search("BOOM zebra", include_trace=True, touch=False)
    assert "query embedding failed, searching by keywords only" in caplog.text
    assert [r.memory.id for r in response.results] == [ids[ZEBRA]]
    assert response.results[0].score > 0
    assert response.trace is not None
    # the trace shows a keyword-only search: stage 1 found only what BM25 matched
    assert _stage(response.trace, "parallel_search").output_count == 1
    assert [s.name for s in response.trace.stages] == STAGES
    assert response.trace.final_count == 1


def test_a_model_that_goes_down_after_writes(
    flaky_service: MemoryService, flaky: FlakyEmbedder
) -> None:
    ids = _seed(flaky_service)
    flaky.broken = True
    hits = [r.memory.id for r in flaky_service.search("Lisbon sister", touch=False).results]
    assert hits[0] == ids[2]
    # a query no keyword matches has nothing to answer from: empty, not an error
    assert flaky_service.search("ocean voyage", touch=False).results == []


def _drop_fts(service: MemoryService) -> None:
    service.store.conn.execute("DROP TABLE memories_fts")


def test_a_broken_keyword_index_answers_from_vectors(
    flaky_service: MemoryService, caplog: pytest.LogCaptureFixture
) -> None:
    ids = _seed(flaky_service)
    _drop_fts(flaky_service)
    with caplog.at_level(logging.WARNING, logger="memoryd.retrieve.parallel_search"):
        response = flaky_service.search(
            "what is the striped animal at the zoo called", include_trace=True, touch=False
        )
    assert "BM25 leg failed, answering from vectors" in caplog.text
    assert "memories_fts" in caplog.text
    assert response.results[0].memory.id == ids[ZEBRA]
    assert response.trace is not None
    assert _stage(response.trace, "parallel_search").output_count == len(NOTES)
    # a keyword-perfect query still finds its memory by meaning
    assert flaky_service.search("coffee", touch=False).results[0].memory.id == ids[1]


def test_both_legs_failing_is_a_storage_error(
    flaky_service: MemoryService, flaky: FlakyEmbedder
) -> None:
    _seed(flaky_service)
    _drop_fts(flaky_service)
    flaky.broken = True
    with pytest.raises(StorageError, match="both search legs failed") as caught:
        flaky_service.search("zebra", touch=False)
    assert "memories_fts" in str(caught.value)


# ---------------------------------------------------------------------- cross-space merge
PERSONAL_NOTES = [
    "I drink espresso coffee every morning",
    "My coffee grinder is a burr grinder",
    "I have a dentist appointment on Friday",
]
TEAM_NOTES = [
    "The team coffee machine is on the third floor",
    "The office coffee budget is fifty euros a month",
    "Deploys are frozen during the holidays",
]
TEAM = "team/x"


def _add_team_space(service: MemoryService) -> list[Memory]:
    now = to_us(utcnow())
    with service.store.write() as conn:
        conn.execute(
            "INSERT INTO spaces(id, space_type, name, owner_id, created_at, updated_at) "
            "VALUES (?, 'team', 'Team X', ?, ?, ?)",
            (TEAM, service.tenant_id, now, now),
        )
        conn.execute(
            "INSERT INTO space_members(space_id, user_id, role, joined_at) "
            "VALUES (?, ?, 'member', ?)",
            (TEAM, service.tenant_id, now),
        )
    memories = [
        build_direct_memory(text, tenant_id=service.tenant_id, space_id=TEAM) for text in TEAM_NOTES
    ]
    vectors = service.embed([m.content for m in memories])
    service.store.insert_memories(memories, vectors)
    return memories


def _request(query: str, limit: int) -> SearchRequest:
    now = utcnow()
    return SearchRequest(
        query=query,
        limit=limit,
        filter=MemoryFilter(live_at=now),
        now=now,
        include_trace=True,
    )


def test_cross_space_search_weights_and_merges(service: MemoryService, STAGES: list[str]) -> None:
    personal = [service.add(text) for text in PERSONAL_NOTES]
    team = _add_team_space(service)
    spaces = [
        SpaceRef(service.space_id, SpaceType.PERSONAL),
        SpaceRef(TEAM, SpaceType.TEAM),
    ]
    retriever = service.retriever
    assert isinstance(retriever, Retriever)

    response = retriever.search(service.tenant_id, spaces, _request("coffee", 10))
    results = response.results
    by_space = {
        sid: [r for r in results if r.memory.space_id == sid] for sid in (service.space_id, TEAM)
    }
    assert by_space[service.space_id] and by_space[TEAM]
    assert {r.memory.id for r in by_space[service.space_id]} <= {m.id for m in personal}
    assert {r.memory.id for r in by_space[TEAM]} <= {m.id for m in team}
    # each space's best hit scores exactly its space weight
    assert max(r.score for r in by_space[service.space_id]) == 1.0
    assert max(r.score for r in by_space[TEAM]) == 0.8
    assert all(0 < r.score <= 1.0 for r in results)
    scores = [r.score for r in results]
    assert scores == sorted(scores, reverse=True)
    assert results[0].memory.space_id == service.space_id
    # the coffee notes of both spaces are all found
    found = {r.memory.content for r in results}
    assert {PERSONAL_NOTES[0], PERSONAL_NOTES[1], TEAM_NOTES[0], TEAM_NOTES[1]} <= found

    # the trace runs every stage of the recipe once per space, each name prefixed by its space
    assert response.trace is not None
    names = [s.name for s in response.trace.stages]
    assert names == [f"{service.space_id}:{n}" for n in STAGES] + [f"{TEAM}:{n}" for n in STAGES]
    assert response.trace.final_count == len(results)

    # the limit holds across the merge
    limited = retriever.search(service.tenant_id, spaces, _request("coffee", 2)).results
    assert len(limited) == 2
    assert limited[0].score == 1.0
    assert limited[0].memory.space_id == service.space_id

    # one space alone: no prefix, and the team memories are not reachable from it
    alone = retriever.search(service.tenant_id, spaces[:1], _request("coffee", 10))
    assert alone.trace is not None
    assert [s.name for s in alone.trace.stages] == STAGES
    assert all(r.memory.space_id == service.space_id for r in alone.results)
    personal_only = service.search("coffee", spaces=[service.space_id]).results
    assert personal_only and all(r.memory.space_id == service.space_id for r in personal_only)
    # the service searches every space of the tenant by default
    assert {r.memory.space_id for r in service.search("coffee").results} == {
        service.space_id,
        TEAM,
    }


# ---------------------------------------------------------------------- the trace
def test_trace_accounts_for_every_stage(service: MemoryService, STAGES: list[str]) -> None:
    _seed(service)
    service.add("I prefer dark roast coffee in the morning, every day")  # a near-copy
    response = service.search("coffee in the morning", limit=3, include_trace=True, touch=False)
    trace = response.trace
    assert trace is not None
    assert [s.name for s in trace.stages] == STAGES
    first, *rest = trace.stages
    assert first.input_count == 0
    assert first.output_count > 0
    previous = first.output_count
    for stage in rest:
        assert stage.input_count == previous, stage.name
        assert stage.output_count <= stage.input_count, stage.name
        previous = stage.output_count
    for stage in trace.stages:
        if stage.name != "parallel_search":
            assert (stage.score_range is None) == (stage.output_count == 0)
        if stage.score_range is not None:
            assert stage.score_range[0] <= stage.score_range[1]
    assert trace.stages[-1].output_count == trace.final_count == len(response.results)
    assert 0 < len(response.results) <= 3
    # the stages run one after another inside the search: its time holds all of theirs
    assert trace.total_duration_ms >= sum(s.duration_ms for s in trace.stages) - 0.01
    assert service.search("coffee in the morning", touch=False).trace is None


# ---------------------------------------------------------------------- recall counting
def _raw_access(home: Path, ids: Sequence[str]) -> dict[str, tuple[int, int | None]]:
    store = SQLiteStore(home / DB_FILENAME)
    try:
        marks = ", ".join("?" for _ in ids)
        rows = store.conn.execute(
            f"SELECT id, access_count, last_accessed_at FROM memories WHERE id IN ({marks})",
            list(ids),
        ).fetchall()
    finally:
        store.close()
    return {r[0]: (r[1], r[2]) for r in rows}


def test_search_counts_recalls_in_the_background(home: Path, embedder: LocalEmbedder) -> None:
    with MemoryService(home, embedder=embedder) as svc:
        ids = _seed(svc)
        before = to_us(utcnow())
        hits = [r.memory.id for r in svc.search("zebra zoo", limit=2).results]
    after = to_us(utcnow())
    assert hits
    access = _raw_access(home, ids)
    for memory_id in ids:
        count, at = access[memory_id]
        if memory_id in hits:
            assert count == 1
            assert at is not None and before <= at <= after
        else:
            assert (count, at) == (0, None)

    with MemoryService(home, embedder=embedder) as svc:
        again = svc.search("zebra zoo", limit=2, touch=False).results
        assert {r.memory.id for r in again} == set(hits)
        touched = svc.get(hits[0])
        assert touched.access_count == 1
        assert touched.last_accessed_at is not None
        # a recalled memory is trusted a little more; the others are as they were
        assert touched.confidence == pytest.approx(0.5 + RECALL_TRUST_STEP)
        untouched = [m for m in ids if m not in hits]
        assert all(svc.get(m).confidence == 0.5 for m in untouched)
    assert _raw_access(home, ids) == access  # touch=False changed nothing


def test_search_without_touch_changes_nothing(service: MemoryService, home: Path) -> None:
    ids = _seed(service)
    assert service.search("tennis", touch=False).results
    service.close()
    assert _raw_access(home, ids) == {i: (0, None) for i in ids}


# ---------------------------------------------------------------------- query vector cache
class CountingEmbedder(FlakyEmbedder):
    """The real model, counting the texts it is asked to embed."""

    def __init__(self, inner: LocalEmbedder) -> None:
        super().__init__(inner)
        self.texts: list[str] = []

    def _embed(self, texts: Sequence[str]) -> Vectors:
        self.texts += texts
        return super()._embed(texts)


def test_a_repeated_query_is_embedded_once_and_a_failure_is_not_remembered(
    home: Path, embedder: LocalEmbedder
) -> None:
    counting = CountingEmbedder(embedder)
    with MemoryService(home, embedder=counting) as svc:
        ids = _seed(svc)
        counting.texts.clear()
        first = [r.memory.id for r in svc.search("my sister in Lisbon", touch=False).results]
        again = [r.memory.id for r in svc.search("my sister in Lisbon", touch=False).results]
        assert first == again and first[0] == ids[2]
        assert counting.texts == ["my sister in Lisbon"]

        counting.broken = True  # the model goes down: keywords answer, nothing cached
        svc.search("tennis on Saturday", touch=False)
        counting.broken = False
        found = svc.search("tennis on Saturday", include_trace=True, touch=False)
        assert found.trace is not None
        assert _stage(found.trace, "parallel_search").output_count == len(NOTES)  # vector leg
        # asked twice: the failed attempt, then again once the model is back
        assert counting.texts == ["my sister in Lisbon", *["tennis on Saturday"] * 2]
