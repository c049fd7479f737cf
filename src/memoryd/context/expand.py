"""Expansion's last step: stored messages made whole again (pointer lines and tool results
replaced by the large parts they stand for)."""

from __future__ import annotations

from typing import Any

from memoryd.context.messages import POINTER_RE, pointer_ids
from memoryd.context.models import StoredMessage


def whole(message: StoredMessage, blobs: dict[str, str]) -> dict[str, Any]:
    data = message.to_json()
    content = message.content
    data["content"] = POINTER_RE.sub(lambda m: blobs.get(m.group(1), m.group(0)), content)
    data["tool_results"] = restore(data.get("tool_results"), blobs)
    if data["tool_results"] is None:
        del data["tool_results"]
    return data


def restore(value: Any, blobs: dict[str, str]) -> Any:
    if isinstance(value, str):
        ids = pointer_ids(value)
        return (
            blobs.get(ids[0], value)
            if len(ids) == 1 and value.startswith("[memoryd file:")
            else value
        )
    if isinstance(value, list):
        return [restore(v, blobs) for v in value]
    if isinstance(value, dict):
        return {k: restore(v, blobs) for k, v in value.items()}
    return value
