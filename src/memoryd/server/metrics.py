"""What an operator watches: ``GET /metrics`` in Prometheus' text format, and a request id.

Counted as requests pass (:class:`Observed`, around everything else, so a
refusal at the edge counts too): requests by method, route and status,
their latency, and each search stage's time. Read when scraped
(:class:`StoreCollector`): the embedding queue's depth, background work by
kind and state, the database's size and the disk's free space. Routes are
labelled by their template (``/v1/memories/{memory_id}``), never the path
a client sent, so the series stay few; no label names a tenant.

Each request gets an id: the client's ``X-Request-Id`` when it is a plain
token, else a new one. It comes back in the same header and is on every log
line written while the request runs (:mod:`memoryd.server.logs`), so a
client's report and the server's log meet.

The registry is the server process's own. With ``memoryd serve --workers``
each worker counts what it served; a scrape reads one of them.
"""

from __future__ import annotations

import hmac
import re
import shutil
import time
import uuid
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from typing import TYPE_CHECKING

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

if TYPE_CHECKING:
    from memoryd.service import MemoryService

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
REQUEST_ID = "x-request-id"
_TOKEN = re.compile(r"[A-Za-z0-9._:-]{1,64}")
# the id of the request this code runs for ("-" outside one): read by the log formatter
request_id: ContextVar[str] = ContextVar("memoryd_request_id", default="-")
# seconds: a cached search takes a few milliseconds, an LLM call tens of seconds
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)
STAGE_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1)


class StoreCollector(Collector):
    """Read at each scrape: what is waiting and how much room is left."""

    def __init__(self, service: MemoryService) -> None:
        self.service = service

    def collect(self) -> Iterator[Metric]:
        store = self.service.store
        queue = GaugeMetricFamily(
            "memoryd_embedding_queue_depth", "Stored turns waiting for their vectors."
        )
        queue.add_metric([], store.count_pending_embeddings())
        yield queue
        jobs = GaugeMetricFamily(
            "memoryd_background_jobs",
            "Background work (smart ingest, consolidation, imports, ...) by kind and state.",
            labels=["kind", "state"],
        )
        for kind, state, count in store.job_counts():
            jobs.add_metric([kind, state], count)
        yield jobs
        size = GaugeMetricFamily("memoryd_store_bytes", "The database's size on disk.")
        size.add_metric([], store.store_bytes())
        yield size
        free = GaugeMetricFamily(
            "memoryd_disk_free_bytes", "Free space on the file system of the home directory."
        )
        free.add_metric([], shutil.disk_usage(self.service.settings.home).free)
        yield free
        hits, misses = self.service.engine.retriever.query_cache()
        for name, count, what in (
            ("hits", hits, "Searches whose query vector came from the cache (a repeated query)."),
            ("misses", misses, "Searches that embedded their query."),
        ):
            family = CounterMetricFamily(f"memoryd_query_cache_{name}", what)
            family.add_metric([], count)
            yield family


class ServerMetrics:
    """The server's registry and the series written as requests run."""

    def __init__(self, service: MemoryService) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "memoryd_http_requests",
            "HTTP requests answered, by method, route template and status.",
            ["method", "route", "status"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "memoryd_http_request_duration_seconds",
            "Time to answer a request, by method and route template.",
            ["method", "route"],
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.stages = Histogram(
            "memoryd_search_stage_duration_seconds",
            "Time spent in each stage of the search pipeline.",
            ["stage"],
            buckets=STAGE_BUCKETS,
            registry=self.registry,
        )
        self.registry.register(StoreCollector(service))
        service.retriever.observe_stage = self.observe_stage

    def observe_stage(self, stage: str, seconds: float) -> None:
        self.stages.labels(stage).observe(seconds)

    def render(self) -> bytes:
        return generate_latest(self.registry)


def is_admin(headers: Mapping[str, str], admin_key: str) -> bool:
    """The admin key, as ``X-API-Key`` or as a Bearer token (what Prometheus sends)."""
    given = headers.get("x-api-key") or ""
    scheme, _, token = (headers.get("authorization") or "").partition(" ")
    if not given and scheme.lower() == "bearer":
        given = token.strip()
    return bool(given) and hmac.compare_digest(given.encode(), admin_key.encode())


def _route(scope: Scope) -> str:
    """The route template that answered ("-" when none did: a refusal before routing)."""
    route = scope.get("route")
    path = getattr(route, "path", None)
    return path if isinstance(path, str) else "-"


class Observed:
    """Around the whole app: a request id for each request, and its count and latency."""

    def __init__(self, app: ASGIApp, metrics: ServerMetrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        sent = dict(scope.get("headers") or []).get(REQUEST_ID.encode(), b"").decode("latin-1")
        rid = sent if _TOKEN.fullmatch(sent) else uuid.uuid4().hex
        token = request_id.set(rid)
        started = time.perf_counter()
        status = 500  # an exception that escapes before an answer

        async def tagged(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                MutableHeaders(scope=message)[REQUEST_ID] = rid
            await send(message)

        try:
            await self.app(scope, receive, tagged)
        finally:
            route = _route(scope)
            method = scope["method"]
            self.metrics.requests.labels(method, route, str(status)).inc()
            self.metrics.latency.labels(method, route).observe(time.perf_counter() - started)
            request_id.reset(token)
