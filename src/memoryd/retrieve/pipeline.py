"""The read path: the stages of hybrid retrieval, in order, with an optional trace.

Each stage is a small pure function in its own module; this file only runs
them, per space, and merges the spaces.
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

import numpy as np
import numpy.typing as npt

from memoryd.embed import Embedder
from memoryd.embed.batcher import QueryBatcher
from memoryd.errors import MemorydError
from memoryd.models import (
    Memory,
    MemoryType,
    ScoredMemory,
    SearchResponse,
    SearchTrace,
    StageTrace,
)
from memoryd.retrieve.bm25_floor import bm25_floor
from memoryd.retrieve.candidate import Candidate, by_score
from memoryd.retrieve.config import (
    DEFAULT_RECIPE,
    STAGES,
    SearchConfig,
    SpaceRef,
    contentless,
    provenance_weight,
    stage_names,
)
from memoryd.retrieve.convex_fusion import convex_fuse
from memoryd.retrieve.cross_encoder import CrossEncoder, cross_encoder_rerank
from memoryd.retrieve.date_match import date_match
from memoryd.retrieve.decay import decay_boost
from memoryd.retrieve.hard_cutoff import hard_cutoff
from memoryd.retrieve.importance import importance_weight
from memoryd.retrieve.length_norm import length_norm
from memoryd.retrieve.min_score import min_score_filter
from memoryd.retrieve.mmr import mmr_diversity
from memoryd.retrieve.neighbour_support import neighbour_support
from memoryd.retrieve.parallel_search import QueryVector, parallel_search, submit_embedding
from memoryd.retrieve.rrf_fusion import rrf_fuse
from memoryd.retrieve.rrf_normalize import rrf_normalize
from memoryd.retrieve.session_support import session_support
from memoryd.retrieve.speaker_match import speaker_match
from memoryd.retrieve.subject_match import asked_attribute, subject_match
from memoryd.retrieve.topk_cap import topk_cap
from memoryd.store.filters import MemoryFilter
from memoryd.store.protocol import Store
from memoryd.text.attribute_meaning import asked_attributes
from memoryd.threads import search_slots

log = logging.getLogger(__name__)
# query vectors kept per retriever (384 float32 each with the bundled model: ~1.5 MB)
QUERY_CACHE_SIZE = 1024


@dataclass
class SearchRequest:
    query: str
    limit: int
    filter: MemoryFilter
    now: datetime
    min_score: float | None = None
    include_trace: bool = False
    config: SearchConfig = field(default_factory=lambda: DEFAULT_RECIPE)


# told each stage's name and seconds, whatever the request (an operator's metrics)
StageObserver = Callable[[str, float], None]


class _Tracer:
    def __init__(
        self, enabled: bool, prefix: str = "", observe: StageObserver | None = None
    ) -> None:
        self.enabled = enabled
        self.prefix = prefix
        self.observe = observe
        self.stages: list[StageTrace] = []

    def run(
        self,
        name: str,
        candidates: list[Candidate],
        stage: Callable[[list[Candidate]], list[Candidate]],
    ) -> list[Candidate]:
        started = time.perf_counter()
        count = len(candidates)
        out = stage(candidates)
        if self.observe is not None:
            self.observe(name, time.perf_counter() - started)
        if self.enabled:
            scores = [c.score for c in out]
            self.stages.append(
                StageTrace(
                    name=self.prefix + name,
                    input_count=count,
                    output_count=len(out),
                    duration_ms=round((time.perf_counter() - started) * 1000, 3),
                    score_range=(min(scores), max(scores)) if scores else None,
                )
            )
        return out


class Retriever:
    def __init__(
        self, store: Store, embedder: Embedder, reranker: CrossEncoder | None = None
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.reranker = reranker
        self.observe_stage: StageObserver | None = None  # set by a server that counts
        # concurrent searches' queries go to the model together
        self._queries = QueryBatcher(embedder)
        # a search that is all CPU here waits for a turn: a few at a time finish sooner than
        # all at once; one that waits on the network (its model, a reranker) does not
        local = embedder.runs_here and reranker is None
        self._turns: AbstractContextManager[Any] = (
            threading.BoundedSemaphore(search_slots()) if local else nullcontext()
        )
        # a repeated query (an agent asking again each turn, a hook's prompt) skips the model;
        # failures raise, so they are never cached
        self._embed_cached = functools.lru_cache(maxsize=QUERY_CACHE_SIZE)(self._embed_fresh)

    def query_cache(self) -> tuple[int, int]:
        """(hits, misses) of the query-vector cache since the process started: how many
        searches skipped the model because the same query came before."""
        info = self._embed_cached.cache_info()
        return info.hits, info.misses

    def _embed_fresh(self, query: str) -> npt.NDArray[np.float32]:
        vector = self._queries.embed_query(query)
        vector.flags.writeable = False  # shared by every search of this query
        return vector

    def query_vector(self, query: str) -> npt.NDArray[np.float32] | None:
        """The query's vector as search embeds it (the model's query form, cached for
        repeated queries, never stored); None when the model failed."""
        return self._embed_query(query)

    def _embed_query(self, query: str) -> npt.NDArray[np.float32] | None:
        try:
            return self._embed_cached(query)
        except (MemorydError, RuntimeError, ValueError) as exc:
            log.warning("query embedding failed, searching by keywords only: %s", exc)
            return None

    def search_space(
        self,
        tenant_id: str,
        space_id: str,
        request: SearchRequest,
        query_vector: Future[QueryVector],
        tracer: _Tracer,
    ) -> list[Candidate]:
        cfg, limit = request.config, request.limit
        if request.filter.as_of is not None:  # what was true then: its turns were not stale
            cfg = replace(cfg, stale_turn_boost=1.0)
        min_score = cfg.min_score if request.min_score is None else request.min_score
        started = time.perf_counter()
        fetch = limit * cfg.fetch_multiplier
        found = parallel_search(
            self.store, tenant_id, space_id, request.query, query_vector, fetch, request.filter
        )
        # fewer candidates than asked for: they are all the store holds for this query
        vector_hits = sum(c.vector_score is not None for c in found)
        exhaustive = (vector_hits or len(found)) < fetch
        memories = self.store.by_rowids([c.rowid for c in found])
        for c in found:
            c.memory = memories.get(c.rowid)
        found = [c for c in found if c.memory is not None]
        if tracer.enabled:
            tracer.stages.append(
                StageTrace(
                    name=tracer.prefix + "parallel_search",
                    input_count=0,
                    output_count=len(found),
                    duration_ms=round((time.perf_counter() - started) * 1000, 3),
                )
            )
        stages: dict[str, Callable[[list[Candidate]], list[Candidate]]] = {
            "fusion": lambda cs: (
                rrf_fuse(cs, cfg) if cfg.fusion == "rrf" else convex_fuse(cs, cfg, exhaustive)
            ),
            # who and what the query is about: a named speaker's turns up, others' facts and
            # plans down, the user's statement of the attribute it asks about up
            "speaker_match": lambda cs: asked_attribute(
                subject_match(speaker_match(cs, request.query, cfg), request.query, cfg),
                request.query,
                cfg,
                lambda: asked_attributes(request.query, query_vector.result(), self.embedder),
            ),
            "date_match": lambda cs: date_match(cs, request.query, cfg),
            "rrf_normalize": lambda cs: rrf_normalize(cs, cfg, exhaustive),
            "session_support": lambda cs: session_support(cs, cfg),
            "neighbour_support": lambda cs: neighbour_support(cs, cfg),
            "min_score_filter": lambda cs: min_score_filter(cs, min_score),
            "topk_cap": lambda cs: topk_cap(cs, limit, cfg.topk_multiplier),
            "cross_encoder": lambda cs: cross_encoder_rerank(cs, request.query, self.reranker, cfg),
            "bm25_floor": lambda cs: bm25_floor(cs, cfg),
            "decay_boost": lambda cs: decay_boost(cs, request.now) if cfg.decay else cs,
            "importance_weight": lambda cs: importance_weight(cs) if cfg.importance_weight else cs,
            "length_norm": lambda cs: length_norm(cs) if cfg.length_norm else cs,
            "hard_cutoff": lambda cs: hard_cutoff(cs, cfg.hard_cutoff),
            "mmr_diversity": lambda cs: mmr_diversity(cs, limit, cfg),
        }
        for stage, name in zip(STAGES[1:], stage_names(cfg)[1:], strict=True):
            found = tracer.run(name, found, stages[stage])
        return found

    def _similarities(self, query: QueryVector, ids: list[str]) -> dict[str, float]:
        """Cosine similarity of the query to each result: the absolute relevance signal."""
        if query is None or not ids:
            return {}
        vectors = self.store.vectors_of(ids)
        return {i: round(float(np.dot(v, query)), 6) for i, v in vectors.items()}

    def search(
        self, tenant_id: str, spaces: Sequence[SpaceRef], request: SearchRequest
    ) -> SearchResponse:
        with self._turns:
            return self._search(tenant_id, spaces, request)

    def _search(
        self, tenant_id: str, spaces: Sequence[SpaceRef], request: SearchRequest
    ) -> SearchResponse:
        started = time.perf_counter()
        query_vector = submit_embedding(self._embed_query, request.query)
        tracer = _Tracer(request.include_trace, observe=self.observe_stage)
        merged: list[tuple[Candidate, float]] = []
        for space in spaces:
            tracer.prefix = f"{space.space_id}:" if len(spaces) > 1 else ""
            found = self.search_space(tenant_id, space.space_id, request, query_vector, tracer)
            top = max((c.score for c in found), default=0.0)
            weight = request.config.space_weights.get(space.space_type, 1.0)
            # per-space normalisation: each space's best hit scores its space weight;
            # what another tenant shared weighs less again (provenance_weight)
            for c in found:
                mine = provenance_weight(c.mem, tenant_id, request.config)
                merged.append((c, (c.score / top) * weight * mine if top > 0 else 0.0))
        merged.sort(key=lambda pair: -pair[1])
        ranked = [(c.mem, score) for c, score in merged]
        if request.filter.as_of is None:
            ranked = current_first(ranked)
        kept = distinct_turns(ranked)[: request.limit]
        similarity = self._similarities(query_vector.result(), [m.id for m, _ in kept])
        results = [
            ScoredMemory(memory=memory, score=round(score, 6), similarity=similarity.get(memory.id))
            for memory, score in kept
        ]
        trace = None
        if request.include_trace:
            trace = SearchTrace(
                stages=tracer.stages,
                final_count=len(results),
                total_duration_ms=round((time.perf_counter() - started) * 1000, 3),
            )
        return SearchResponse(results=results, trace=trace)


def distinct_turns(ranked: list[tuple[Memory, float]]) -> list[tuple[Memory, float]]:
    """Each turn's words once: the best-ranked copy of a turn stands for the others.

    The same turn can be stored more than once (sent in two sessions, or
    before repeats without a session were recognised); five copies of one
    line would push four other memories out of the list.
    """
    seen: set[str] = set()
    out = []
    for memory, score in ranked:
        if memory.memory_type is MemoryType.SESSION:
            if memory.content in seen:
                continue
            seen.add(memory.content)
        out.append((memory, score))
    return out


def current_first(ranked: list[tuple[Memory, float]]) -> list[tuple[Memory, float]]:
    """No raw turn above the memory that superseded what it said, no chatter above content.

    A turn whose fact was replaced ("user: I live in Berlin", after the move)
    is moved to just below the replacing memory when both are found, with
    that memory's score at most, so the order stays by score. Turns that
    carry nothing (importance 0: "Big change!") go after everything else,
    scored at most as the last of it. The rest keeps its place.
    """
    content = [(m, s) for m, s in ranked if not contentless(m)]
    floor = content[-1][1] if content else 1.0
    ranked = content + [(m, min(s, floor)) for m, s in ranked if contentless(m)]
    out = list(ranked)
    position = {memory.id: i for i, (memory, _) in enumerate(out)}
    for memory, score in ranked:
        newer = memory.superseded_by
        if memory.memory_type is not MemoryType.SESSION or newer not in position:
            continue
        here, there = position[memory.id], position[newer]
        if here > there:
            continue
        out.pop(here)
        out.insert(there, (memory, min(score, out[there - 1][1])))
        position = {m.id: i for i, (m, _) in enumerate(out)}
    return out


__all__ = [
    "STAGES",
    "Retriever",
    "SearchRequest",
    "SpaceRef",
    "by_score",
    "current_first",
    "distinct_turns",
    "stage_names",
]
