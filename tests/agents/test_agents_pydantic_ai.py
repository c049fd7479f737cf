"""Pydantic AI on memoryd: a real agent remembers across two runs."""

from __future__ import annotations

import json
from collections.abc import Callable

from agent_loop import COFFEE_QUESTION, PREFERENCE
from chat_replies import tool_call
from pydantic_ai import Agent
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider
from scripted_llm import ScriptedLLM

from memoryd.agents import MemoryManager
from memoryd.agents.frameworks.pydantic_ai import capture_run, memory_instructions, memory_tool

Make = Callable[..., MemoryManager]


def make_agent(llm: ScriptedLLM, manager: MemoryManager) -> Agent[None, str]:
    model = OpenAIChatModel("scripted", provider=OpenAIProvider(base_url=llm.url, api_key="t"))
    return Agent(
        model,
        instructions=["You help the user plan their day.", memory_instructions(manager)],
        tools=[memory_tool(manager)],
    )


def test_a_pydantic_ai_agent_remembers_across_two_runs(managers: Make) -> None:
    with ScriptedLLM() as llm:
        first = managers()
        llm.script("Noted: dark roast.")
        result = make_agent(llm, first).run_sync(PREFERENCE)
        assert result.output == "Noted: dark roast."
        assert capture_run(first, result) == 2
        first.shutdown()  # the extraction is finished before the process ends

        second = managers()
        llm.script(
            tool_call("memory", {"action": "reflect", "query": "coffee the user likes"}),
            "Order dark roast beans.",
        )
        result = make_agent(llm, second).run_sync(COFFEE_QUESTION)
        sent = llm.chat_requests[1].messages
        tool_answer = llm.chat_requests[2].messages[-1]
    instructions = "\n".join(m["content"] for m in sent if m["role"] in ("system", "developer"))
    assert "You help the user plan their day." in instructions
    assert "dark roast" in instructions  # recalled into the instructions
    assert "memoryd-context" in instructions
    reflected = json.loads(tool_answer["content"])
    assert reflected["citations"] and "dark roast" in reflected["answer"]
    assert result.output == "Order dark roast beans."
