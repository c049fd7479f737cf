"""The OpenAI Agents SDK on memoryd: a ``Session`` and the memory tool.

::

    from agents import Agent, Runner
    from memoryd.agents import MemoryManager
    from memoryd.agents.frameworks.openai_agents import MemorydSession, memory_tool

    memory = MemoryManager()
    agent = Agent(name="assistant", instructions="…", tools=[memory_tool(memory)])
    session = MemorydSession("chat-42", memory)
    result = Runner.run_sync(agent, "I prefer dark roast coffee.", session=session)

The session keeps the conversation's items exactly as the SDK gives them
(the SDK's own SQLite session, in a file of the profile's home), and hands
every user and assistant message to memoryd as it is added, so what was
said is distilled into long-term memory. A later session (another id,
another process) reaches it through the memory tool. ``pop_item`` and
``clear_session`` change the session's history only: what memoryd learned
stays until forgotten.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agents import FunctionTool
from agents.items import TResponseInputItem
from agents.memory import SQLiteSession
from agents.tool_context import ToolContext

from memoryd.agents.manager import MemoryManager
from memoryd.agents.tool import DESCRIPTION, PARAMETERS, TOOL_NAME, handle_tool_call

SESSIONS_FILENAME = "openai-agents-sessions.db"
TEXT_PARTS = ("input_text", "output_text", "text")


def message_text(item: Any) -> dict[str, str] | None:
    """A user or assistant message item as ``{"role", "content"}``; None for other items
    (tool calls and their outputs, reasoning): they are the agent's work, not what was said."""
    if not isinstance(item, Mapping) or item.get("role") not in ("user", "assistant"):
        return None
    content = item.get("content")
    if isinstance(content, list):
        parts = [
            str(p.get("text", ""))
            for p in content
            if isinstance(p, Mapping) and p.get("type") in TEXT_PARTS
        ]
        content = "\n".join(p for p in parts if p)
    if not isinstance(content, str) or not content.strip():
        return None
    return {"role": str(item["role"]), "content": content}


class MemorydSession(SQLiteSession):
    """A conversation's history for the Agents SDK, captured into memoryd as it grows."""

    def __init__(
        self, session_id: str, manager: MemoryManager, *, db_path: Path | str | None = None
    ) -> None:
        if db_path is None:
            manager.home.mkdir(parents=True, exist_ok=True)
            db_path = manager.home / SESSIONS_FILENAME
        super().__init__(session_id, db_path)
        self.manager = manager

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        await super().add_items(items)
        said = [m for m in (message_text(i) for i in items) if m is not None]
        if said:
            await asyncio.to_thread(self.manager.capture, said, self.session_id)


def memory_tool(manager: MemoryManager) -> FunctionTool:
    """memoryd's memory tool (search, remember, forget, reflect) as an Agents SDK tool."""

    async def invoke(context: ToolContext[Any], arguments: str) -> str:
        result = await asyncio.to_thread(handle_tool_call, manager, arguments)
        return json.dumps(result, ensure_ascii=False)

    return FunctionTool(
        name=TOOL_NAME,
        description=DESCRIPTION,
        params_json_schema=PARAMETERS,
        on_invoke_tool=invoke,
        strict_json_schema=False,  # its fields are optional per action
    )
