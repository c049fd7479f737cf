"""Pydantic AI on memoryd: recall in the instructions, the memory tool, capture after a run.

::

    from pydantic_ai import Agent
    from memoryd.agents import MemoryManager
    from memoryd.agents.frameworks.pydantic_ai import capture_run, memory_instructions, memory_tool

    memory = MemoryManager()
    agent = Agent(
        "openai:gpt-4o-mini",
        instructions=["You help the user.", memory_instructions(memory)],
        tools=[memory_tool(memory)],
    )
    result = agent.run_sync("I prefer dark roast coffee.")
    capture_run(memory, result)        # the turn goes to long-term memory

``memory_instructions`` is a dynamic instruction: before each model request
it recalls what memoryd holds about the run's prompt (``prefetch``) and
adds the fenced block, or nothing when nothing is relevant.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic_ai import RunContext, Tool
from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, UserPromptPart

from memoryd.agents.manager import MemoryManager
from memoryd.agents.tool import DESCRIPTION, PARAMETERS, TOOL_NAME, handle_tool_call


def memory_tool(manager: MemoryManager) -> Tool[Any]:
    """memoryd's memory tool (search, remember, forget, reflect) as a Pydantic AI tool."""

    def memory(**arguments: Any) -> dict[str, Any]:
        return handle_tool_call(manager, arguments)

    return Tool.from_schema(memory, TOOL_NAME, DESCRIPTION, PARAMETERS)


def _prompt_text(prompt: Any) -> str:
    if isinstance(prompt, str):
        return prompt
    if isinstance(prompt, list | tuple):
        return "\n".join(p for p in prompt if isinstance(p, str))
    return ""


def memory_instructions(
    manager: MemoryManager, session_id: str | None = None
) -> Callable[[RunContext[Any]], str | None]:
    """A dynamic instruction: the memories relevant to the run's prompt, fenced."""

    def recalled_memories(ctx: RunContext[Any]) -> str | None:
        query = _prompt_text(ctx.prompt)
        return (manager.prefetch(query, session_id) or None) if query.strip() else None

    return recalled_memories


def capture_run(manager: MemoryManager, result: Any, session_id: str | None = None) -> int:
    """Hand a finished run's user prompts and text answers to memoryd; how many were new."""
    said: list[dict[str, str]] = []
    for message in result.new_messages():
        if isinstance(message, ModelRequest):
            said += [
                {"role": "user", "content": part.content}
                for part in message.parts
                if isinstance(part, UserPromptPart) and isinstance(part.content, str)
            ]
        elif isinstance(message, ModelResponse):
            text = "".join(p.content for p in message.parts if isinstance(p, TextPart))
            if text.strip():
                said.append({"role": "assistant", "content": text})
    return manager.capture(said, session_id)
