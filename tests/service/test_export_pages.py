"""An export reads raw messages and history a page at a time, on both backends: what it
holds is the same as one read of everything, whatever the page size."""

from __future__ import annotations

import json
from io import StringIO

import pytest

from memoryd.portability import export_jsonl
from memoryd.service import MemoryService
from memoryd.store.postgres import memory_history as pg_history


def test_messages_come_a_page_at_a_time_in_order(service: MemoryService) -> None:
    said = [{"role": "user", "content": f"message {i} about the garden"} for i in range(7)]
    service.ingest(said, session_id="s1")
    everything = service.session_messages()
    for batch in (1, 3, 7, 1000):
        paged = list(
            service.store.iter_session_messages(service.tenant_id, service.space_id, batch)
        )
        assert paged == everything, batch
    assert [m["content"] for m in everything] == [m["content"] for m in said]


def test_the_export_holds_every_message_and_history_row(
    service: MemoryService, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pg_history, "EXPORT_BATCH", 1)  # a page a row (PostgreSQL's history)
    first = service.add("The user lives in Lisbon", key="home")
    service.add("The user lives in Porto", key="home")
    service.ingest([{"role": "user", "content": "hello there"}], session_id="s2")
    out = StringIO()
    export_jsonl(service, out)
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    kinds = [line["type"] for line in lines]
    assert kinds.count("message") == 1
    history = [line for line in lines if line["type"] == "history"]
    assert {h["memory_id"] for h in history} >= {first.id}
    assert len(history) == len(
        list(service.store.space_history(service.tenant_id, service.space_id))
    )
