"""Ingest, large parts, the LLM summariser, summaries into long-term memory, recall layers."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from scripted_llm import Reply, ScriptedLLM

from memoryd.context import ContextConfig, ContextEngine
from memoryd.context.summarise import ExtractiveSummariser, LLMSummariser, Source, entities
from memoryd.errors import NotFoundError, ValidationError
from memoryd.llm.openai_compat import OpenAICompatibleLLM
from memoryd.service import MemoryService

QUIET = replace(ContextConfig(), remember_turns=False, remember_summaries=False)


def chat(n: int, start: int = 0) -> list[dict[str, str]]:
    return [
        {
            "role": "user" if i % 2 == 0 else "assistant",
            "content": f"Message {i}: Dana moved the launch of Orion to 14 March 2026, "
            "budget 42000 euros. The team agreed on the plan and the rollback steps "
            "after a long discussion.",
        }
        for i in range(start, start + n)
    ]


def test_resent_messages_are_not_stored_twice(quiet_engine: ContextEngine) -> None:
    first = quiet_engine.ingest_batch("c", chat(5))
    assert len(first.stored) == 5
    again = quiet_engine.ingest_batch("c", chat(6))  # the host resends its history and one more
    assert (len(again.stored), again.duplicates) == (1, 5)
    with_id = quiet_engine.ingest("c", {"id": "x1", "role": "user", "content": "ok"})
    same_id = quiet_engine.ingest("c", {"id": "x1", "role": "user", "content": "changed"})
    other_id = quiet_engine.ingest("c", {"id": "x2", "role": "user", "content": "ok"})
    assert (len(with_id.stored), len(same_id.stored), len(other_id.stored)) == (1, 0, 1)
    assert quiet_engine.conversation("c")["messages"] == 8


def test_a_bad_message_in_a_batch_stores_none_of_it(quiet_engine: ContextEngine) -> None:
    with pytest.raises(ValidationError, match="message 2"):
        quiet_engine.ingest_batch("c", [*chat(2), {"content": "no role"}])
    with pytest.raises(NotFoundError):
        quiet_engine.conversation("c")
    with pytest.raises(ValidationError):
        quiet_engine.ingest_batch("c", [])


def test_a_large_part_is_stored_once_and_expands_whole(quiet_engine: ContextEngine) -> None:
    big = "def handler():\n    return 42\n" * 1200  # ~34,000 characters
    message = {
        "role": "user",
        "content": [
            {"type": "text", "text": "Here is the file:"},
            {"type": "text", "name": "handler.py", "text": big},
        ],
    }
    stored = quiet_engine.ingest("c", message).stored[0]
    assert big not in stored.content and "[memoryd file: handler.py," in stored.content
    assert stored.tokens < 200  # the pointer, not the file, is what the context pays for
    quiet_engine.ingest_batch("c", chat(8))
    report = quiet_engine.compact("c")
    assert report.compacted and all(big not in s.content for s in report.made)
    expanded = quiet_engine.expand("c", summary_id=report.made[0].id)
    assert expanded["messages"][0]["content"] == "Here is the file:\n" + big


def test_unknown_conversation_and_small_budget(quiet_engine: ContextEngine) -> None:
    # nothing ingested yet (a host's first prompt): an empty assembly, not an error
    fresh = quiet_engine.assemble("nope", 4000)
    assert fresh.messages == [] and fresh.summaries == 0 and fresh.system_addition == ""
    assert quiet_engine.grep("nope", "anything") == []  # nothing ingested, nothing found
    with pytest.raises(NotFoundError):
        quiet_engine.compact("nope")
    with pytest.raises(ValidationError):
        quiet_engine.assemble("nope", 0)
    quiet_engine.ingest_batch("c", chat(6))
    with pytest.raises(ValidationError, match="fresh tail"):
        quiet_engine.assemble("c", 60)
    with pytest.raises(ValidationError):
        quiet_engine.assemble("c", 0)


def test_the_extractive_summary_keeps_names_numbers_and_dates() -> None:
    sources = [Source(m["content"], m["role"]) for m in chat(30)]
    summary = ExtractiveSummariser().summarise("leaf", sources, 300).text
    text = " ".join(s.text for s in sources)
    for entity in entities(text):
        assert entity.casefold() in summary.casefold(), entity
    assert len(summary) < len(text) / 3


def test_llm_summaries_and_a_failing_llm_leaves_messages_uncompacted(
    service: MemoryService,
) -> None:
    with ScriptedLLM() as llm:
        summariser = LLMSummariser(OpenAICompatibleLLM("test-model", llm.url))
        engine = ContextEngine(service, QUIET, summariser)
        engine.ingest_batch("c", chat(12))
        llm.script("this is not JSON", "still not JSON")
        report = engine.compact("c")
        assert not report.compacted and "summary failed" in (report.error or "")
        assert all(i["kind"] == "message" for i in engine.conversation("c")["context_items"])
        assert engine.check("c") == []
        llm.script(Reply(status=500))
        assert not engine.after_turn("c", 400).compacted
        llm.script(
            '{"summary": "Dana moved the Orion launch to 14 March 2026 (42000 euros).", '
            '"triples": [["Dana", "moved launch to", "14 March 2026"], ["bad"], [1, 2, 3]]}'
        )
        report = engine.after_turn("c", 400)
        assert report.compacted and report.summaries[0]["kind"] == "leaf"
        assert "Dana" in llm.chat_requests[-1].messages[1]["content"]
        triples = engine.triples.about(service.tenant_id, ["Dana"], 10)
        assert [t.line for t in triples if t.predicate == "moved launch to"] == [
            "Dana moved launch to 14 March 2026"
        ]
        assert engine.check("c") == []
        items = engine.conversation("c")["context_items"]
        assert items[0]["kind"] == "summary" and len(items) == 5


def test_summaries_become_long_term_memories(service: MemoryService) -> None:
    engine = ContextEngine(service, replace(ContextConfig(), remember_turns=False))
    decided = "I prefer Postgres over MySQL for every new service."
    engine.ingest_batch("c", [{"role": "user", "content": decided}, *chat(10)])
    report = engine.compact("c")
    assert report.compacted
    assert decided in report.made[0].content
    found = service.search("which database do I prefer", limit=10, touch=False)
    assert any("Postgres" in r.memory.content for r in found.results)
    for task_id in report.memory_tasks:
        assert service.wait_for_task(task_id)["status"] == "completed"
    distilled = [m for m in service.list_memories()[0] if "Postgres" in m.content]
    assert distilled, "smart ingest made no memory of the decision"


def test_recall_layers_and_optimisation(service: MemoryService, tmp_path: Path) -> None:
    identity = tmp_path / "agent.md"
    identity.write_text("You are Atlas, the release assistant of the Orion team.\n", "utf-8")
    service.add("Always deploy Orion with the blue-green script.", memory_type="pinned")
    config = replace(ContextConfig(), identity_files=(str(identity),))
    engine = ContextEngine(service, config)
    engine.ingest_batch("c", chat(30))
    engine.ingest("c", {"role": "user", "content": "Dana is the release manager of Orion."})
    engine.after_turn("c", 2000)
    assembled = engine.assemble("c", 2000, query="When is the Orion launch?")
    recall = assembled.messages[0]["content"]
    assert recall.startswith("<memoryd-identity>") and "You are Atlas" in recall
    assert "<memoryd-essential>" in recall and "blue-green" in recall
    assert "<memoryd-recall>" in recall and "14 March 2026" in recall
    assert assembled.estimated_tokens <= 2000
    lean = ContextEngine(service, ContextConfig.optimized(identity_files=(str(identity),)))
    small = lean.assemble("c", 2000, query="When is the Orion launch?")
    assert len(small.layers["L3"]) <= 3 + 3  # 3 hits and at most 3 graph triples
    assert "L2" not in small.layers


def test_grep_finds_chinese_words_of_any_length(quiet_engine: ContextEngine) -> None:
    quiet_engine.ingest_batch(
        "zh",
        [
            {"role": "user", "content": "我们下周三在杭州西湖边的茶馆见面。"},
            {"role": "assistant", "content": "好的，我会准备预算表。"},
        ],
    )
    hits = quiet_engine.grep("zh", "杭州 茶馆")  # two-character words, not one phrase
    assert hits and hits[0].seq == 0 and not hits[0].exact
    assert quiet_engine.grep("zh", "预算表")[0].seq == 1


def test_the_sdk_wraps_a_memory(tmp_path: Path, embedder: object) -> None:
    import memoryd

    with memoryd.Memory(tmp_path / "sdk-home", embedder=embedder) as mem:  # type: ignore[arg-type]
        engine = memoryd.ContextEngine(mem)
        engine.ingest("c", {"role": "user", "content": "The invoice number is INV-7."})
        assert engine.assemble("c", 1000).messages[-1]["content"] == "The invoice number is INV-7."
    with pytest.raises(TypeError):
        memoryd.ContextEngine(object())
