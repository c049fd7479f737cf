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
