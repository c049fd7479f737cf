"""The memory tool: one JSON-schema tool an agent calls to search, remember, forget, reflect.

The same parameters serve both tool formats::

    client.chat.completions.create(..., tools=[openai_tool()])     # OpenAI function calling
    client.messages.create(..., tools=[anthropic_tool()])           # Anthropic tool use

and :func:`handle_tool_call` executes a call against a
:class:`~memoryd.agents.MemoryManager`, whichever provider is behind it.
It always answers a JSON-able object: the result, or ``{"error": {"code",
"message"}}`` for a bad call or a failing store, so a tool call never
raises into the agent's loop.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping
from typing import Any

from memoryd.agents.manager import MemoryManager
from memoryd.errors import MemorydError, ValidationError

log = logging.getLogger(__name__)

TOOL_NAME = "memory"
ACTIONS = ("search", "remember", "forget", "reflect")
MAX_LIMIT = 20
DESCRIPTION = (
    "Long-term memory about the user and past work, kept across conversations. "
    "search: find memories relevant to `query`. remember: store `content`, one durable fact "
    "(a preference, a decision, something about the user). forget: remove the memory "
    "`memory_id` (an id from a search). reflect: an answer to `query` synthesised across "
    "memories, citing the ids it used."
)
PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "action": {"type": "string", "enum": list(ACTIONS), "description": "What to do."},
        "query": {"type": "string", "description": "For search and reflect: what to look for."},
        "content": {"type": "string", "description": "For remember: the fact to keep."},
        "memory_id": {"type": "string", "description": "For forget: the memory's id."},
        "limit": {
            "type": "integer",
            "minimum": 1,
            "maximum": MAX_LIMIT,
            "description": "For search: how many memories (default 5).",
        },
    },
    "required": ["action"],
    "additionalProperties": False,
}
# the field each action cannot do without
REQUIRED = {"search": "query", "remember": "content", "forget": "memory_id", "reflect": "query"}


def openai_tool() -> dict[str, Any]:
    """The tool in OpenAI's function-calling format (Chat Completions ``tools``)."""
    return {
        "type": "function",
        "function": {"name": TOOL_NAME, "description": DESCRIPTION, "parameters": PARAMETERS},
    }


def anthropic_tool() -> dict[str, Any]:
    """The tool in Anthropic's tool-use format (Messages ``tools``)."""
    return {"name": TOOL_NAME, "description": DESCRIPTION, "input_schema": PARAMETERS}


def _error(code: str, message: str) -> dict[str, Any]:
    return {"error": {"code": code, "message": message}}


def _arguments(arguments: Mapping[str, Any] | str) -> dict[str, Any]:
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments or "{}")
        except ValueError as exc:
            raise ValidationError(f"the tool's arguments are not JSON: {exc}") from None
    if not isinstance(arguments, Mapping):
        raise ValidationError("the tool's arguments must be a JSON object")
    unknown = sorted(set(arguments) - set(PARAMETERS["properties"]))
    if unknown:
        raise ValidationError(f"unknown argument(s) {', '.join(unknown)}")
    return dict(arguments)


def handle_tool_call(manager: MemoryManager, arguments: Mapping[str, Any] | str) -> dict[str, Any]:
    """Run one call of the memory tool (``arguments`` as an object or its JSON text)."""
    try:
        args = _arguments(arguments)
        action = args.get("action")
        if action not in ACTIONS:
            return _error(
                "unsupported_action",
                f"unsupported action {action!r}; the memory tool does {', '.join(ACTIONS)}",
            )
        needed = REQUIRED[action]
        value = args.get(needed)
        if not isinstance(value, str) or not value.strip():
            raise ValidationError(f"{action} needs '{needed}' (a non-empty string)")
        return {"action": action, **_ACTIONS[action](manager, value, args)}
    except MemorydError as exc:
        return _error(exc.code, exc.message)
    except Exception as exc:  # a provider's own failure: said to the agent, logged here
        log.warning("memoryd: the memory tool failed: %s", exc)
        return _error("provider_error", f"{type(exc).__name__}: {exc}")


def _search(m: MemoryManager, query: str, args: dict[str, Any]) -> dict[str, Any]:
    limit = args.get("limit", 5)
    if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= MAX_LIMIT:
        raise ValidationError(f"limit must be an integer from 1 to {MAX_LIMIT}")
    return {"results": [h.as_dict() for h in m.search(query, limit)]}


def _remember(m: MemoryManager, content: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"memory": m.remember(content).as_dict()}


def _forget(m: MemoryManager, memory_id: str, args: dict[str, Any]) -> dict[str, Any]:
    m.forget(memory_id)
    return {"forgotten": memory_id}


def _reflect(m: MemoryManager, query: str, args: dict[str, Any]) -> dict[str, Any]:
    return m.reflect(query).as_dict()


_ACTIONS: dict[str, Callable[[MemoryManager, str, dict[str, Any]], dict[str, Any]]] = {
    "search": _search,
    "remember": _remember,
    "forget": _forget,
    "reflect": _reflect,
}
