"""Searches that are all CPU here take turns: at most two a core run at once."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from memoryd.retrieve.cross_encoder import JinaCrossEncoder
from memoryd.retrieve.pipeline import Retriever
from memoryd.service import MemoryService
from memoryd.threads import search_slots

CLIENTS = 12


def _most_at_once(service: MemoryService, monkeypatch: pytest.MonkeyPatch) -> int:
    running = most = 0
    count = threading.Lock()
    search = Retriever._search

    def counted(self: Retriever, *args: Any) -> Any:
        nonlocal running, most
        with count:
            running += 1
            most = max(most, running)
        time.sleep(0.05)  # long enough for every client to arrive meanwhile
        try:
            return search(self, *args)
        finally:
            with count:
                running -= 1

    monkeypatch.setattr(Retriever, "_search", counted)
    threads = [
        threading.Thread(
            target=service.search, args=(f"the parcel of day {i}",), kwargs={"touch": False}
        )
        for i in range(CLIENTS)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    return most


def test_local_searches_take_turns(service: MemoryService, monkeypatch: pytest.MonkeyPatch) -> None:
    service.add("The courier brings the parcel on Fridays")
    assert search_slots() < CLIENTS
    assert _most_at_once(service, monkeypatch) == search_slots()


def test_searches_that_wait_on_a_reranker_do_not(
    service: MemoryService, monkeypatch: pytest.MonkeyPatch
) -> None:
    service.add("The courier brings the parcel on Fridays")
    # a reranker behind the network (at a loopback port nothing listens on: the default
    # recipe does not rerank, so it is never asked)
    reranker = JinaCrossEncoder(api_key="unused", base_url="http://127.0.0.1:9/v1/rerank")
    service.engine._retriever = Retriever(
        service.engine.store, service.engine.embedder, reranker=reranker
    )
    assert _most_at_once(service, monkeypatch) == CLIENTS


def test_a_conversation_left_out_is_left_out_and_the_rest_fills_the_page(
    service: MemoryService,
) -> None:
    """Recall for a conversation in progress leaves its own turns out (the vector leg by
    its few rows, not every other row listed); the page still holds ``limit`` others."""
    for day in range(6):
        service.ingest(
            [{"role": "user", "content": f"The parcel for the lake house came on day {day}"}],
            session_id="now" if day % 2 else f"before-{day}",
        )
    for day in range(6):
        service.add(f"The lake house parcel of week {day} was signed for by a neighbour")
    found = service.search("the lake house parcel", limit=6, exclude_session="now", touch=False)
    assert len(found.results) == 6
    assert all(hit.memory.session_id != "now" for hit in found.results)
    everything = service.search("the lake house parcel", limit=20, touch=False).results
    assert any(hit.memory.session_id == "now" for hit in everything)
