"""The shape of an MCP tool: its name, schema, what it runs and how its result reads."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from memoryd.mcp.backend import Backend, Json


def string(description: str) -> Json:
    return {"type": "string", "description": description}


def strings(description: str) -> Json:
    return {"type": "array", "items": {"type": "string"}, "description": description}


def object_schema(properties: Json, required: list[str] | None = None) -> Json:
    schema: Json = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    schema["additionalProperties"] = False
    return schema


@dataclass(frozen=True)
class ToolSpec:
    name: str
    title: str
    description: str
    input_schema: Json
    run: Callable[[Backend, Json], Json]
    render: Callable[[Json], str]
    read_only: bool = False
    destructive: bool = False
