"""File import through the real server, offline (no LLM): every format, strategy and error."""

from __future__ import annotations

import json
from collections.abc import Callable

import httpx
import pytest
from import_client import imported, memories, search, upload, wait_import
from samples import (
    HANDBOOK_SECTIONS,
    NEEDLE,
    PDF_LINES,
    PNG,
    chatgpt_export,
    claude_export,
    handbook,
    jsonl_chat,
    long_text,
    pdf,
)
from server_harness import TenantClient, start_server

from memoryd.embed.local import LocalEmbedder
from memoryd.imports.runner import PASSAGE_BATCH, PASSAGE_MAX_CHARS
from memoryd.imports.split import smart_split

IMPORT_FIELDS = (
    "id", "status", "file_type", "filename", "agent_id", "space_id", "post_process", "strategy",
    "storage_total", "storage_stored", "storage_skipped", "extraction_status", "extraction_chunks",
    "extraction_facts", "extraction_progress", "reconcile_status", "reconcile_relations",
    "reconcile_merged", "reconcile_progress", "errors", "created_at", "completed_at",
)  # fmt: skip


def from_import(t: TenantClient, filename: str, memory_type: str = "insight") -> list[dict]:
    return [m for m in memories(t, memory_type) if m["source"] == f"import:{filename}"]


# ---------------------------------------------------------------------- each format
def test_markdown_handbook_becomes_one_memory_per_section(tenant: TenantClient) -> None:
    task = imported(tenant, "handbook.md", handbook().encode())
    assert list(task)[: len(IMPORT_FIELDS)] == list(IMPORT_FIELDS)  # reference §2.3, in order
    assert task["status"] == "completed", task
    assert (task["strategy"], task["requested_strategy"], task["format"]) == (
        "section",
        "auto",
        "markdown",
    )
    sections = 1 + len(HANDBOOK_SECTIONS)  # the title with its intro line, then each "##"
    assert task["extraction_chunks"] == task["extraction_progress"] == sections
    assert task["memories_created"] == sections and task["extractor"] == "rules"
    stored = from_import(tenant, "handbook.md")
    assert len(stored) == sections
    headings = {m["l0_abstract"] for m in stored}  # offline: the heading is the index line
    assert set(HANDBOOK_SECTIONS) <= headings
    top = search(tenant, "how long does an on-call shift last")[0]
    assert top["content"].startswith("## On-call rotation")  # the source text is the content
    assert "pager escalates" in top["content"]


def test_long_text_is_split_into_overlapping_chunks(tenant: TenantClient) -> None:
    text = long_text()
    task = imported(tenant, "story.txt", text.encode())
    assert (task["status"], task["strategy"], task["format"]) == ("completed", "atomic", "text")
    assert len(smart_split(text)) == 3  # extraction chunks, after storing the passages
    passages = smart_split(text, PASSAGE_MAX_CHARS, 0)
    batches = -(-len(passages) // PASSAGE_BATCH)  # each batch of passages is a unit of work
    assert task["extraction_chunks"] == task["extraction_progress"] == 3 + batches
    assert task["sources_stored"] == len(passages)
    stored = from_import(tenant, "story.txt", "session")
    assert sorted(m["content"] for m in stored) == sorted(passages)
    found = search(
        tenant, "the lighthouse keeper's secret password marmalade", memory_type="session"
    )
    assert NEEDLE in found[0]["content"]


@pytest.mark.parametrize(
    ("name", "data", "fmt"),
    [
        ("conversations.json", chatgpt_export(), "chatgpt"),
        ("claude.json", claude_export(), "claude"),
        ("chat.jsonl", jsonl_chat(), "jsonl"),
    ],
)
def test_chat_exports_go_through_the_conversation_path(
    tenant: TenantClient, name: str, data: bytes, fmt: str
) -> None:
    task = imported(tenant, name, data)
    assert (task["status"], task["strategy"], task["format"]) == ("completed", "atomic", fmt)
    assert task["sources_stored"] == 6  # every turn, searchable at once
    turns = from_import(tenant, name, "session")
    assert len(turns) == 6 and all(m["session_id"].startswith("import-") for m in turns)
    facts = " | ".join(m["content"] for m in from_import(tenant, name))
    assert "green tea" in facts and "Lisbon" in facts, facts
    assert "Hi there" not in facts  # greetings are noise, not memories
    assert search(tenant, "which morning drink does the user have")[0]["content"].find("tea") >= 0


def test_pdf_text_is_imported(tenant: TenantClient) -> None:
    task = imported(tenant, "planning.pdf", pdf(PDF_LINES))
    assert (task["status"], task["strategy"], task["format"]) == ("completed", "document", "pdf")
    [memory] = from_import(tenant, "planning.pdf")
    assert all(line in memory["content"] for line in PDF_LINES)
    assert memory["l0_abstract"] == "Quarterly planning notes."
    assert "Priya" in search(tenant, "who owns the storage migration")[0]["content"]


def test_a_duplicate_is_refused_unless_forced(tenant: TenantClient) -> None:
    first = imported(tenant, "handbook.md", handbook().encode())
    again = upload(tenant, "copy.md", handbook().encode())
    assert again.status_code == 400
    assert again.json()["error"]["code"] == "validation_error"
    assert "already imported" in again.json()["error"]["message"]
    assert first["id"] in again.json()["error"]["message"]
    forced = imported(tenant, "copy.md", handbook().encode(), force="true")
    assert forced["status"] == "completed"
    # the same sections again: the reconciler skips them instead of storing twins
    assert forced["memories_created"] == 0 and forced["decisions"] == {
        "skip": first["memories_created"]
    }


def test_store_only_keeps_chunks_without_extraction(tenant: TenantClient) -> None:
    task = imported(tenant, "notes.md", handbook().encode(), post_process="false")
    assert task["extraction_status"] == task["reconcile_status"] == "skipped"
    passages = smart_split(handbook(), PASSAGE_MAX_CHARS, 0)
    assert task["sources_stored"] == len(passages) == 2 and not from_import(tenant, "notes.md")
    assert len(from_import(tenant, "notes.md", "session")) == 2  # passages of <= 2,000 chars


def test_files_route_stores_tagged_chunks(tenant: TenantClient) -> None:
    response = upload(tenant, "tool.py", b"def hello():\n    return 'hi'\n", path="/v1/files")
    assert response.status_code == 202, response.text
    body = response.json()
    assert body["filename"] == "tool.py" and body["content_type"] == 'Code("python")'
    assert body["chunks_created"] == 1
    wait_import(tenant, body["task_id"])
    [chunk] = [m for m in memories(tenant, "session") if m["source"] == "file_upload:tool.py"]
    assert {"file:tool.py", "chunk_type:code"} <= set(chunk["tags"])


# ---------------------------------------------------------------------- tasks
def test_list_rerun_and_cross_reconcile(tenant: TenantClient) -> None:
    task = imported(tenant, "handbook.md", handbook().encode())
    listed = tenant.http.get("/v1/imports").json()
    assert listed["total"] == 1 and listed["imports"][0]["id"] == task["id"]
    rerun = tenant.http.post(f"/v1/imports/{task['id']}/intelligence")
    assert rerun.status_code == 200 and rerun.json()["status"] == "processing"
    again = wait_import(tenant, task["id"])
    assert again["status"] == "completed" and again["memories_created"] == task["memories_created"]
    assert (
        len(from_import(tenant, "handbook.md")) == task["memories_created"]
    )  # replaced, not added
    linked = tenant.http.post("/v1/imports/cross-reconcile").json()
    assert linked["memories_scanned"] == task["memories_created"]
    # two memories saying one thing in other words are linked, once; the rest stay as they were
    said = [
        tenant.http.post("/v1/memories", json={"content": text}).json()["id"]
        for text in (
            "Refunds above 500 euros need a manager's approval.",
            "A manager must approve any refund over 500 euros.",
        )
    ]
    pair = tenant.http.post("/v1/imports/cross-reconcile").json()
    assert pair == {"relations_created": 1, "memories_scanned": task["memories_created"] + 2}
    relations = [
        (m, r["target_id"], r["relation_type"])
        for m in said
        for r in tenant.http.get(f"/v1/memories/{m}").json()["relations"]
    ]
    assert relations in ([(said[0], said[1], "supports")], [(said[1], said[0], "supports")])
    assert tenant.http.post("/v1/imports/cross-reconcile").json()["relations_created"] == 0


def test_errors_are_clear(tenant: TenantClient, make_tenant: Callable[[str], TenantClient]) -> None:
    bob = make_tenant("bob")

    def error(response: httpx.Response) -> tuple[int, str]:
        return response.status_code, response.json()["error"]["message"]

    status, message = error(upload(tenant, "image.png", PNG))
    assert status == 400 and "binary file" in message
    status, message = error(upload(tenant, "latin.txt", "café".encode("latin-1")))
    assert status == 400 and "not valid UTF-8" in message
    status, message = error(upload(tenant, "h.md", b"text", strategy="magic"))
    assert status == 400 and "unknown strategy" in message
    status, message = error(upload(tenant, "h.md", b"text", post_process="maybe"))
    assert status == 400 and "post_process" in message
    status, message = error(tenant.http.post("/v1/imports", files={"other": ("a", b"x")}))
    assert (status, message) == (400, "validation error: no 'file' field")
    status, message = error(tenant.http.post("/v1/imports", content=json.dumps({"a": 1})))
    assert status == 400 and "multipart" in message
    assert error(tenant.http.get("/v1/imports/nope"))[0] == 404
    task = imported(tenant, "h.md", b"# Note\n\nOne line.")
    assert bob.http.get(f"/v1/imports/{task['id']}").status_code == 404  # another tenant's
    assert bob.http.post(f"/v1/imports/{task['id']}/rollback").status_code == 404


def test_files_over_the_limit_are_refused(
    tmp_path_factory: pytest.TempPathFactory, embedder: LocalEmbedder
) -> None:
    running, stop = start_server(
        tmp_path_factory.mktemp("small") / "home", embedder, max_import_bytes=20_000
    )
    try:
        with running.client() as anonymous:
            key = anonymous.post("/v1/tenants", json={"name": "t"}).json()["api_key"]
        with running.client(key) as http:
            over = http.post("/v1/imports", files={"file": ("big.txt", b"a" * 20_001)})
            assert over.status_code == 413
            assert over.json()["error"]["code"] == "payload_too_large"
            assert "limit is 20000" in over.json()["error"]["message"]
            # far over: refused by its Content-Length before the body is read
            huge = http.post("/v1/imports", files={"file": ("huge.txt", b"a" * 1_200_000)})
            assert huge.status_code == 413
            ok = http.post("/v1/imports", files={"file": ("small.txt", b"a small note")})
            assert ok.status_code == 200
    finally:
        stop()
