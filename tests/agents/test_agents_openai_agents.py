"""The OpenAI Agents SDK on memoryd: a real agent remembers across two runs and sessions."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator

import pytest
from agents import Agent, OpenAIChatCompletionsModel, Runner, set_tracing_disabled
from chat_replies import tool_call
from openai import AsyncOpenAI
from scripted_llm import ScriptedLLM

from memoryd.agents import MemoryManager
from memoryd.agents.frameworks.openai_agents import MemorydSession, memory_tool

Make = Callable[..., MemoryManager]


@pytest.fixture(autouse=True)
def no_tracing() -> Iterator[None]:
    """The SDK exports traces to OpenAI by default; memoryd's tests are offline."""
    set_tracing_disabled(True)
    yield
    set_tracing_disabled(False)


def make_agent(llm: ScriptedLLM, manager: MemoryManager) -> Agent:
    model = OpenAIChatCompletionsModel(
        model="scripted", openai_client=AsyncOpenAI(base_url=llm.url, api_key="test")
    )
    return Agent(
        name="assistant",
        instructions="You help the user. Use the memory tool to remember and recall.",
        model=model,
        tools=[memory_tool(manager)],
    )


def test_an_agents_sdk_agent_remembers_across_two_runs(managers: Make) -> None:
    with ScriptedLLM() as llm:
        first = managers()
        llm.script(
            tool_call("memory", {"action": "remember", "content": "The user's dog is Biscuit."}),
            "I will remember Biscuit.",
        )
        session = MemorydSession("chat-1", first)
        result = Runner.run_sync(
            make_agent(llm, first), "My dog is called Biscuit, remember it.", session=session
        )
        assert result.final_output == "I will remember Biscuit."
        stored = json.loads(llm.chat_requests[1].messages[-1]["content"])
        assert stored["memory"]["content"] == "The user's dog is Biscuit."
        items = asyncio.run(session.get_items())
        assert [i.get("role") for i in items if "role" in i][:1] == ["user"]
        first.shutdown()

        second = managers()  # a new run: another manager, another session
        llm.script(
            tool_call("memory", {"action": "search", "query": "user's dog name"}),
            "Your dog is Biscuit.",
        )
        result = Runner.run_sync(
            make_agent(llm, second),
            "What is my dog called?",
            session=MemorydSession("chat-2", second),
        )
        recalled = json.loads(llm.chat_requests[3].messages[-1]["content"])
    assert "Biscuit" in recalled["results"][0]["content"]
    assert result.final_output == "Your dog is Biscuit."
    # the session's messages were captured into memoryd too: the first run's words are there
    said = [h.content for h in second.search("dog called Biscuit", 10) if h.turn]
    assert "user: My dog is called Biscuit, remember it." in said
    assert "assistant: I will remember Biscuit." in said


def test_the_session_keeps_its_items_exactly(managers: Make) -> None:
    manager = managers()
    session = MemorydSession("exact", manager)
    items = [
        {"role": "user", "content": "I live in Porto."},
        {"type": "function_call", "call_id": "c1", "name": "memory", "arguments": "{}"},
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "Porto it is.", "annotations": []}],
        },
    ]
    asyncio.run(session.add_items(items))  # type: ignore[arg-type]
    assert asyncio.run(session.get_items()) == items
    assert (
        manager.capture([{"role": "user", "content": "I live in Porto."}], session_id="exact") == 0
    )  # already captured by the session
    assert asyncio.run(session.pop_item()) == items[-1]
