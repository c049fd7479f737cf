"""Scripted chat answers in the OpenAI shape: a tool call, for the agents' model loops."""

from __future__ import annotations

import json
from typing import Any

from scripted_llm import Reply


def tool_call(name: str, arguments: dict[str, Any], call_id: str = "call_1") -> Reply:
    """A chat completion whose answer is one call of tool ``name``."""
    call = {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }
    message = {"role": "assistant", "content": None, "tool_calls": [call]}
    choice = {"index": 0, "message": message, "finish_reason": "tool_calls"}
    usage = {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}
    body = {"id": "c1", "object": "chat.completion", "created": 0, "model": "m", "usage": usage}
    return Reply(raw=json.dumps({**body, "choices": [choice]}).encode())
