"""File import with an LLM: the scripted OpenAI-compatible server answers each prompt kind.

Sections and documents get the model's summary as their index line while
their source text stays the content; chunks of a long text and chat
exports yield the model's facts; a model that is down costs summaries
(after the seed's retries with backoff), never data.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from import_client import imported, memories, search
from samples import (
    HANDBOOK_SECTIONS,
    NEEDLE,
    PDF_LINES,
    chatgpt_export,
    handbook,
    jsonl_chat,
    long_text,
    pdf,
)
from scripted_llm import Recorded, Reply, ScriptedLLM
from server_harness import RunningServer, TenantClient, start_server

from memoryd.embed.local import LocalEmbedder
from memoryd.prompts import (
    CHUNK_FACTS_SYSTEM,
    DOCUMENT_SYSTEM,
    EXTRACTION_SYSTEM,
    RECONCILE_SYSTEM,
    SECTION_SYSTEM,
)


def fact(text: str, category: str = "entities") -> dict[str, object]:
    return {"l0_abstract": text, "l2_content": text, "category": category, "importance": 0.8}


def answer(request: Recorded) -> str:
    """What a well-behaved model answers, by the prompt it was given."""
    system, user = request.messages[0]["content"], request.messages[-1]["content"]
    if system in (SECTION_SYSTEM, DOCUMENT_SYSTEM):
        first = user.strip().splitlines()[0].lstrip("# ")
        return json.dumps({"l0_abstract": f"Summary: {first}", "category": "patterns"})
    if system == CHUNK_FACTS_SYSTEM:
        facts = (
            [fact("The lighthouse keeper's password is marmalade-4471.")] if NEEDLE in user else []
        )
        return json.dumps({"facts": facts})
    if system == EXTRACTION_SYSTEM:
        facts = [fact("Dana prefers green tea to coffee in the morning.", "preferences")]
        return json.dumps({"facts": [*facts, fact("Dana lives in Lisbon.", "profile")]})
    if system == RECONCILE_SYSTEM:
        return json.dumps({"decisions": []})  # leave it to the rules
    raise AssertionError(f"unexpected prompt: {system[:80]}")


@pytest.fixture(scope="module")
def llm() -> Iterator[ScriptedLLM]:
    with ScriptedLLM(answer) as server:
        yield server


@pytest.fixture(scope="module")
def server(
    tmp_path_factory: pytest.TempPathFactory, embedder: LocalEmbedder, llm: ScriptedLLM
) -> Iterator[RunningServer]:
    """This module's server talks to the scripted LLM."""
    home = tmp_path_factory.mktemp("imports-llm") / "home"
    running, stop = start_server(
        home, embedder, llm_base_url=llm.url, llm_model="test-model", llm_timeout_s=10
    )
    yield running
    stop()


def test_sections_get_the_model_summary_and_keep_their_text(
    tenant: TenantClient, llm: ScriptedLLM
) -> None:
    task = imported(tenant, "handbook.md", handbook().encode())
    assert (task["status"], task["strategy"], task["extractor"]) == ("completed", "section", "llm")
    stored = [m for m in memories(tenant) if m["source"] == "import:handbook.md"]
    assert len(stored) == 1 + len(HANDBOOK_SECTIONS)
    by_summary = {m["l0_abstract"]: m for m in stored}
    deploy = by_summary["Summary: Deploying to production"]
    assert (
        deploy["content"].startswith("## Deploying to production")
        and deploy["category"] == "patterns"
    )
    assert task["llm"]["calls"] >= len(stored)


def test_chunks_of_a_long_text_yield_the_model_facts(tenant: TenantClient) -> None:
    story = imported(tenant, "story.txt", long_text().encode())
    assert (story["status"], story["extraction_facts"]) == ("completed", 1)
    found = search(tenant, "what is the lighthouse keeper's password")
    assert found[0]["content"] == "The lighthouse keeper's password is marmalade-4471."


@pytest.mark.parametrize(
    ("name", "data"), [("conversations.json", chatgpt_export()), ("chat.jsonl", jsonl_chat())]
)
def test_chat_exports_yield_the_model_facts_once(
    tenant: TenantClient, name: str, data: bytes
) -> None:
    chat = imported(tenant, name, data)
    assert chat["status"] == "completed" and chat["extraction_facts"] == 2
    assert chat["sources_stored"] == 6  # the turns, as the conversation path stores them
    facts = {m["content"] for m in memories(tenant) if m["source"] == f"import:{name}"}
    assert facts == {"Dana prefers green tea to coffee in the morning.", "Dana lives in Lisbon."}
    duplicate = tenant.http.post("/v1/imports", files={"file": (name, data)})
    assert duplicate.status_code == 400 and "already imported" in duplicate.text
    again = imported(tenant, name, data, force="true")
    assert "create" not in again["decisions"], again  # the same facts: skipped, no twins


def test_a_document_is_one_summarised_memory(tenant: TenantClient) -> None:
    task = imported(tenant, "planning.pdf", pdf(PDF_LINES))
    [memory] = [m for m in memories(tenant) if m["source"] == "import:planning.pdf"]
    assert task["strategy"] == "document"
    assert memory["l0_abstract"] == "Summary: Quarterly planning notes."
    assert all(line in memory["content"] for line in PDF_LINES)


def test_a_model_that_is_down_costs_summaries_not_data(
    tenant: TenantClient, llm: ScriptedLLM
) -> None:
    llm.script(*[Reply(status=503)] * 3)  # the first section's call and its two retries
    task = imported(tenant, "note.md", b"# Shopping\n\nBuy oat milk and call the plumber.")
    assert task["status"] == "completed"
    assert task["extractor"] == "rules (llm failed)" and task["errors"], task
    [memory] = [m for m in memories(tenant) if m["source"] == "import:note.md"]
    assert memory["l0_abstract"] == "Shopping"  # the rule summary: its heading
    assert task["llm"]["failures"] == 3
