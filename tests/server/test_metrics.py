"""``GET /metrics`` read by Prometheus' own parser, the request id, and the JSON log lines."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families
from server_harness import RunningServer, TenantClient, start_server

from memoryd.embed.local import LocalEmbedder
from memoryd.server.logs import JsonFormatter, RequestIdFilter
from memoryd.server.metrics import request_id


def scrape(url: str, **headers: str) -> dict[str, list[tuple[dict[str, str], float]]]:
    answer = httpx.get(f"{url}/metrics", headers=headers, timeout=20)
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("text/plain")
    found: dict[str, list[tuple[dict[str, str], float]]] = {}
    for family in text_string_to_metric_families(answer.text):
        for sample in family.samples:
            found.setdefault(sample.name, []).append((sample.labels, sample.value))
    return found


def value(found: dict[str, list[tuple[dict[str, str], float]]], name: str, **labels: str) -> float:
    return sum(v for ls, v in found.get(name, []) if all(ls.get(k) == x for k, x in labels.items()))


def test_requests_stages_queue_jobs_and_room_are_scraped(
    server: RunningServer, alice: TenantClient
) -> None:
    before = scrape(server.url)
    assert (
        alice.http.post("/v1/memories", json={"content": "The user keeps bees"}).status_code == 201
    )
    turns = [{"role": "user", "content": "I moved to Oslo"}]
    smart = alice.http.post("/v1/memories", json={"messages": turns, "mode": "smart"})
    assert smart.status_code == 202
    for _ in range(3):
        assert alice.http.get("/v1/memories/search", params={"q": "bees"}).status_code == 200
    assert alice.http.get("/v1/memories/nope").status_code == 404
    after = scrape(server.url)
    route = "/v1/memories/search"
    searched = value(after, "memoryd_http_requests_total", route=route, status="200")
    assert searched - value(before, "memoryd_http_requests_total", route=route, status="200") == 3
    assert (
        value(after, "memoryd_http_requests_total", route="/v1/memories/{memory_id}", status="404")
        >= 1
    )
    assert value(after, "memoryd_http_request_duration_seconds_count", route=route) >= 3
    stages = {ls["stage"] for ls, _ in after["memoryd_search_stage_duration_seconds_count"]}
    assert {"convex_fusion", "mmr_diversity"} <= stages
    assert "memoryd_embedding_queue_depth" in after
    assert value(after, "memoryd_background_jobs", kind="ingest") >= 1  # the smart ingest
    assert value(after, "memoryd_store_bytes") > 0
    assert value(after, "memoryd_disk_free_bytes") > 0
    # the three searches asked one query: the model embedded it once, the cache served twice
    hits = value(after, "memoryd_query_cache_hits_total")
    assert hits - value(before, "memoryd_query_cache_hits_total") == 2
    misses = value(after, "memoryd_query_cache_misses_total")
    assert misses - value(before, "memoryd_query_cache_misses_total") >= 1
    assert not any("alice" in str(ls) for samples in after.values() for ls, _ in samples)


def test_each_answer_carries_a_request_id(server: RunningServer, alice: TenantClient) -> None:
    mine = alice.http.get("/v1/memories", headers={"x-request-id": "trace-42.a"})
    assert mine.headers["x-request-id"] == "trace-42.a"  # the client's own, echoed
    made = alice.http.get("/v1/memories", headers={"x-request-id": "bad id\twith tab"})
    assert made.headers["x-request-id"] != "bad id\twith tab"
    assert len(made.headers["x-request-id"]) == 32
    refused = httpx.get(f"{server.url}/v1/memories", timeout=20)  # no key: refused at the edge
    assert refused.status_code == 401 and refused.headers["x-request-id"]


@pytest.fixture(scope="module")
def keyed(tmp_path_factory: pytest.TempPathFactory, embedder: LocalEmbedder) -> Iterator[str]:
    running, stop = start_server(
        tmp_path_factory.mktemp("metrics") / "home", embedder, admin_key="adm-secret"
    )
    yield running.url
    stop()


def test_with_an_admin_key_only_it_may_scrape(keyed: str) -> None:
    assert httpx.get(f"{keyed}/metrics", timeout=20).status_code == 401
    wrong = httpx.get(f"{keyed}/metrics", headers={"authorization": "Bearer no"}, timeout=20)
    assert wrong.status_code == 401
    assert "memoryd_disk_free_bytes" in scrape(keyed, authorization="Bearer adm-secret")


def test_a_json_log_line_names_its_request(tmp_path: Path) -> None:
    record = logging.LogRecord(
        "memoryd.test", logging.ERROR, __file__, 1, "went %s", ("wrong",), None
    )
    token = request_id.set("req-7")
    try:
        RequestIdFilter().filter(record)
    finally:
        request_id.reset(token)
    line = json.loads(JsonFormatter().format(record))
    assert line["message"] == "went wrong" and line["request_id"] == "req-7"
    assert line["level"] == "error" and line["logger"] == "memoryd.test" and "T" in line["time"]
