"""The memory tool in both formats, its handler, and reflect's citations."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import anthropic.types
import jsonschema
import openai
import openai.types.chat
import pytest
from chat_replies import tool_call
from pydantic import TypeAdapter
from scripted_llm import Reply, ScriptedLLM

from memoryd.agents import MemoryManager, anthropic_tool, handle_tool_call, openai_tool
from memoryd.agents.reflect import UNGROUNDED_NOTE
from memoryd.agents.tool import PARAMETERS
from memoryd.llm.openai_compat import OpenAICompatibleLLM

Make = Callable[..., MemoryManager]
FACTS = [
    "The user prefers dark roast coffee.",
    "The user lives in Porto.",
    "The user's sister Lena lives in Lisbon.",
]


@pytest.fixture
def scripted() -> Iterator[ScriptedLLM]:
    with ScriptedLLM() as server:
        yield server


def test_the_schema_validates_in_both_formats() -> None:
    jsonschema.Draft202012Validator.check_schema(PARAMETERS)
    TypeAdapter(openai.types.chat.ChatCompletionToolParam).validate_python(
        openai_tool(), strict=True
    )
    TypeAdapter(anthropic.types.ToolParam).validate_python(anthropic_tool(), strict=True)
    assert openai_tool()["function"]["parameters"] == anthropic_tool()["input_schema"]
    validator = jsonschema.Draft202012Validator(PARAMETERS)
    assert validator.is_valid({"action": "search", "query": "coffee", "limit": 3})
    assert not validator.is_valid({"action": "shout"})
    assert not validator.is_valid({"action": "search", "extra": 1})


def test_each_action_works_through_the_handler(managers: Make) -> None:
    manager = managers()
    stored = handle_tool_call(manager, {"action": "remember", "content": FACTS[0]})
    memory_id = stored["memory"]["id"]
    found = handle_tool_call(manager, json.dumps({"action": "search", "query": "coffee"}))
    assert found["action"] == "search"
    assert found["results"][0]["id"] == memory_id
    reflected = handle_tool_call(manager, {"action": "reflect", "query": "what coffee?"})
    assert reflected["mode"] == "offline" and reflected["citations"] == [memory_id]
    assert FACTS[0] in reflected["answer"]
    assert handle_tool_call(manager, {"action": "forget", "memory_id": memory_id}) == {
        "action": "forget",
        "forgotten": memory_id,
    }
    after = handle_tool_call(manager, {"action": "search", "query": "coffee"})
    assert memory_id not in [r["id"] for r in after["results"]]


@pytest.mark.parametrize(
    ("arguments", "code", "words"),
    [
        ({"action": "shout"}, "unsupported_action", "search, remember, forget, reflect"),
        ({}, "unsupported_action", "unsupported action None"),
        ({"action": "search"}, "validation_error", "needs 'query'"),
        ({"action": "remember", "content": "  "}, "validation_error", "needs 'content'"),
        ({"action": "search", "query": "x", "limit": 99}, "validation_error", "limit"),
        ({"action": "search", "query": "x", "colour": 1}, "validation_error", "colour"),
        ("{not json", "validation_error", "not JSON"),
        ({"action": "forget", "memory_id": "0000dead"}, "not_found", "0000dead"),
    ],
)
def test_bad_calls_answer_clearly(
    managers: Make, arguments: dict[str, Any] | str, code: str, words: str
) -> None:
    answer = handle_tool_call(managers(), arguments)
    assert answer["error"]["code"] == code, answer
    assert words in answer["error"]["message"]


def test_an_openai_client_calls_the_tool_end_to_end(managers: Make, scripted: ScriptedLLM) -> None:
    manager = managers()
    manager.remember(FACTS[1])
    scripted.script(tool_call("memory", {"action": "search", "query": "home city"}))
    client = openai.OpenAI(base_url=scripted.url, api_key="test")
    completion = client.chat.completions.create(
        model="m",
        messages=[{"role": "user", "content": "Where do I live?"}],
        tools=[openai_tool()],  # type: ignore[list-item]
    )
    assert scripted.chat_requests[0].body["tools"] == [openai_tool()]
    calls = completion.choices[0].message.tool_calls
    assert calls is not None
    function = calls[0].function  # type: ignore[union-attr]
    result = handle_tool_call(manager, function.arguments)
    assert "Porto" in result["results"][0]["content"]


def reflect_manager(managers: Make, scripted: ScriptedLLM) -> tuple[MemoryManager, list[str]]:
    manager = managers(llm=OpenAICompatibleLLM("test-model", scripted.url))
    ids = [manager.remember(fact).id for fact in FACTS]
    return manager, ids


def test_reflect_cites_only_memories_that_exist(managers: Make, scripted: ScriptedLLM) -> None:
    manager, ids = reflect_manager(managers, scripted)
    scripted.script(
        json.dumps(
            {
                "answer": "Your sister Lena lives in Lisbon [0] and you live in Paris [7].",
                "citations": [0, 7],
            }
        )
    )
    reflection = manager.reflect("where does my family live")
    shown = scripted.chat_requests[0].messages[1]["content"]
    first = shown.split("[0] ", 1)[1].split("\n", 1)[0]
    cited = next(i for i, fact in zip(ids, FACTS, strict=True) if fact in first)
    assert reflection.mode == "llm"
    assert reflection.citations == [cited]
    assert reflection.refused == [7]
    assert "[7]" not in reflection.answer and f"[{cited[:8]}]" in reflection.answer
    assert all(i in ids for i in reflection.citations)
    # through the tool, the same: the ids it cites exist
    # (the sister's city is hers: a question about the user shows the user's own first)
    scripted.script(json.dumps({"answer": "Porto [0].", "citations": [0, 42]}))
    answer = handle_tool_call(manager, {"action": "reflect", "query": "where do I live"})
    assert answer["refused_citations"] == [42]
    assert set(answer["citations"]) <= set(ids) and answer["citations"]


def test_an_answer_citing_no_real_memory_is_refused(managers: Make, scripted: ScriptedLLM) -> None:
    manager, ids = reflect_manager(managers, scripted)
    scripted.script(json.dumps({"answer": "You own a yacht [9].", "citations": [9]}))
    reflection = manager.reflect("where do I and my family live")
    assert scripted.chat_requests, "the model was asked"
    assert "yacht" not in reflection.answer
    assert reflection.note == UNGROUNDED_NOTE
    assert reflection.refused == [9]
    assert set(reflection.citations) <= set(ids)


def test_reflect_without_an_llm_groups_and_orders_the_memories(managers: Make) -> None:
    manager = managers()
    manager.remember("The user lived in Berlin in 2020.")
    manager.remember("The user moved to Porto in 2024.")
    reflection = manager.reflect("where has the user lived")
    assert reflection.mode == "offline"
    assert "No language model is configured" in reflection.note
    lines = reflection.answer.splitlines()
    assert lines[0].startswith("Memories relevant to")
    berlin = next(i for i, line in enumerate(lines) if "Berlin" in line)
    porto = next(i for i, line in enumerate(lines) if "Porto" in line)
    assert berlin < porto  # oldest first
    assert any(line.startswith("## ") for line in lines)


def test_reflect_falls_back_when_the_llm_fails(managers: Make, scripted: ScriptedLLM) -> None:
    manager, _ = reflect_manager(managers, scripted)
    scripted.script(Reply(status=500), Reply(status=500))
    reflection = manager.reflect("where do I live")
    assert reflection.mode == "offline"
    assert "The language model failed" in reflection.note
    assert "Porto" in reflection.answer
