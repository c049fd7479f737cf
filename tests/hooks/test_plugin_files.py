"""The Claude Code plugin in the repository validates against the documented plugin schema.

The schemas below are written from Claude Code's plugin reference (plugin
manifest, hooks configuration, marketplace file, MCP server file), stricter
where the reference only warns, so that a typo fails here rather than load
silently ignored. Then what the files name must exist: every hook command
is a real ``memoryd hook`` subcommand, the MCP command a real ``memoryd``
command, every skill a SKILL.md with its frontmatter.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import typer

import memoryd
from memoryd.cli import app
from memoryd.hooks.runner import EVENTS

ROOT = Path(__file__).parents[2]
MARKETPLACE = ROOT / ".claude-plugin" / "marketplace.json"
PLUGIN = ROOT / "integrations" / "claude-code"

KEBAB = "^[a-z0-9]+(-[a-z0-9]+)*$"
SEMVER = r"^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$"
RELATIVE = r"^\./(?!.*\.\.)[^\\]*$"  # "./…", no parent directories, forward slashes
HOOK_EVENTS = [
    "PreToolUse",
    "PostToolUse",
    "Notification",
    "UserPromptSubmit",
    "Stop",
    "SubagentStop",
    "PreCompact",
    "SessionStart",
    "SessionEnd",
]
MATCHERS = {  # what each event's matcher is matched against
    "SessionStart": ("startup", "resume", "clear", "compact"),
    "PreCompact": ("manual", "auto"),
}
RESERVED_MARKETPLACE_NAMES = {
    "claude-code-marketplace",
    "claude-code-plugins",
    "claude-plugins-official",
    "anthropic-marketplace",
    "anthropic-plugins",
    "agent-skills",
}

AUTHOR = {
    "type": "object",
    "required": ["name"],
    "properties": {
        "name": {"type": "string", "minLength": 1},
        "email": {"type": "string"},
        "url": {"type": "string"},
    },
    "additionalProperties": False,
}
PATHS = {
    "oneOf": [
        {"type": "string", "pattern": RELATIVE},
        {"type": "array", "items": {"type": "string", "pattern": RELATIVE}},
    ]
}
PLUGIN_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["name"],
    "properties": {
        "name": {"type": "string", "pattern": KEBAB},
        "version": {"type": "string", "pattern": SEMVER},
        "description": {"type": "string", "minLength": 1},
        "author": AUTHOR,
        "homepage": {"type": "string", "format": "uri"},
        "repository": {"type": "string"},
        "license": {"type": "string"},
        "keywords": {"type": "array", "items": {"type": "string"}},
        "commands": PATHS,
        "agents": PATHS,
        "skills": PATHS,
        "outputStyles": PATHS,
        "hooks": {"oneOf": [{"type": "string", "pattern": RELATIVE}, {"type": "object"}]},
        "mcpServers": {"oneOf": [{"type": "string", "pattern": RELATIVE}, {"type": "object"}]},
    },
    "additionalProperties": False,
}
HANDLER = {
    "type": "object",
    "oneOf": [
        {
            "required": ["type", "command"],
            "properties": {
                "type": {"const": "command"},
                "command": {"type": "string", "minLength": 1},
                "timeout": {"type": "number", "exclusiveMinimum": 0},
            },
            "additionalProperties": False,
        },
        {
            "required": ["type", "prompt"],
            "properties": {
                "type": {"const": "prompt"},
                "prompt": {"type": "string", "minLength": 1},
                "timeout": {"type": "number", "exclusiveMinimum": 0},
            },
            "additionalProperties": False,
        },
    ],
}
HOOKS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["hooks"],
    "properties": {
        "description": {"type": "string"},
        "hooks": {
            "type": "object",
            "propertyNames": {"enum": HOOK_EVENTS},
            "additionalProperties": {
                "type": "array",
                "minItems": 1,
                "items": {
                    "type": "object",
                    "required": ["hooks"],
                    "properties": {
                        "matcher": {"type": "string"},
                        "hooks": {"type": "array", "minItems": 1, "items": HANDLER},
                    },
                    "additionalProperties": False,
                },
            },
        },
    },
    "additionalProperties": False,
}
MARKETPLACE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["name", "owner", "plugins"],
    "properties": {
        "$schema": {"type": "string"},
        "name": {
            "type": "string",
            "pattern": KEBAB,
            "not": {"enum": sorted(RESERVED_MARKETPLACE_NAMES)},
        },
        "owner": AUTHOR,
        "description": {"type": "string"},
        "version": {"type": "string"},
        "metadata": {
            "type": "object",
            "properties": {
                "description": {"type": "string"},
                "version": {"type": "string", "pattern": SEMVER},
                "pluginRoot": {"type": "string"},
            },
            "additionalProperties": False,
        },
        "plugins": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "required": ["name", "source"],
                "properties": {
                    "name": {"type": "string", "pattern": KEBAB},
                    "source": {
                        "oneOf": [
                            {"type": "string", "pattern": RELATIVE},
                            {
                                "type": "object",
                                "required": ["source"],
                                "properties": {
                                    "source": {"enum": ["github", "url", "git-subdir", "npm"]}
                                },
                            },
                        ]
                    },
                    "description": {"type": "string"},
                    "version": {"type": "string", "pattern": SEMVER},
                    "author": AUTHOR,
                    "homepage": {"type": "string"},
                    "repository": {"type": "string"},
                    "license": {"type": "string"},
                    "keywords": {"type": "array", "items": {"type": "string"}},
                    "category": {"type": "string"},
                    "tags": {"type": "array", "items": {"type": "string"}},
                    "strict": {"type": "boolean"},
                },
                "additionalProperties": False,
            },
        },
    },
    "additionalProperties": False,
}
MCP_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["mcpServers"],
    "properties": {
        "mcpServers": {
            "type": "object",
            "minProperties": 1,
            "additionalProperties": {
                "oneOf": [
                    {
                        "type": "object",
                        "required": ["command"],
                        "properties": {
                            "type": {"const": "stdio"},
                            "command": {"type": "string", "minLength": 1},
                            "args": {"type": "array", "items": {"type": "string"}},
                            "env": {"type": "object", "additionalProperties": {"type": "string"}},
                        },
                        "additionalProperties": False,
                    },
                    {
                        "type": "object",
                        "required": ["type", "url"],
                        "properties": {
                            "type": {"enum": ["http", "sse"]},
                            "url": {"type": "string"},
                            "headers": {"type": "object"},
                        },
                        "additionalProperties": False,
                    },
                ]
            },
        }
    },
    "additionalProperties": False,
}


def load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def commands(group: Any) -> set[str]:
    """The visible subcommands of a command group (typer's own click, so duck-typed)."""
    return {name for name, cmd in group.commands.items() if not cmd.hidden}


def memoryd_cli() -> Any:
    return typer.main.get_command(app)


def test_the_schemas_reject_what_claude_code_rejects() -> None:
    """The schemas are not vacuous: each one turns down a broken file."""
    broken = [
        (PLUGIN_SCHEMA, {"name": "My Plugin"}),
        (PLUGIN_SCHEMA, {"name": "memoryd", "hooks": "hooks/hooks.json"}),
        (HOOKS_SCHEMA, {"hooks": {"SessionBegin": []}}),
        (HOOKS_SCHEMA, {"hooks": {"Stop": [{"hooks": [{"type": "command"}]}]}}),
        (MARKETPLACE_SCHEMA, {"name": "x", "plugins": []}),
        (
            MARKETPLACE_SCHEMA,
            {"name": "claude-code-plugins", "owner": {"name": "a"}, "plugins": []},
        ),
        (MCP_SCHEMA, {"mcpServers": {"memoryd": {"args": ["mcp"]}}}),
    ]
    for schema, document in broken:
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(document, schema)


def test_plugin_manifest() -> None:
    manifest = load(PLUGIN / ".claude-plugin" / "plugin.json")
    jsonschema.validate(manifest, PLUGIN_SCHEMA)
    assert manifest["name"] == "memoryd"
    assert manifest["version"] == memoryd.__version__
    # the default locations are loaded anyway: naming them again loads them twice
    assert "hooks" not in manifest and "mcpServers" not in manifest
    for default in ("hooks/hooks.json", ".mcp.json", "skills"):
        assert (PLUGIN / default).exists(), default


def test_marketplace_points_at_the_plugin() -> None:
    marketplace = load(MARKETPLACE)
    jsonschema.validate(marketplace, MARKETPLACE_SCHEMA)
    manifest = load(PLUGIN / ".claude-plugin" / "plugin.json")
    (entry,) = marketplace["plugins"]
    # relative sources resolve from the marketplace root: the folder holding .claude-plugin/
    source = (MARKETPLACE.parent.parent / entry["source"]).resolve()
    assert source == PLUGIN.resolve()
    assert entry["name"] == manifest["name"] and entry["version"] == manifest["version"]


def test_hooks_run_real_memoryd_hook_commands() -> None:
    config = load(PLUGIN / "hooks" / "hooks.json")
    jsonschema.validate(config, HOOKS_SCHEMA)
    subcommands = commands(memoryd_cli().commands["hook"])
    by_event = {event.name: (command, event) for command, event in EVENTS.items()}
    seen = set()
    for event_name, groups in config["hooks"].items():
        for group in groups:
            matcher = group.get("matcher")
            if matcher is not None and event_name in MATCHERS:
                assert set(matcher.split("|")) <= set(MATCHERS[event_name]), matcher
            for handler in group["hooks"]:
                argv = shlex.split(handler["command"])
                assert argv[:2] == ["memoryd", "hook"] and len(argv) == 3, argv
                assert argv[2] in subcommands
                command, event = by_event[event_name]
                assert argv[2] == command  # the subcommand made for this event
                # the hook gives up (and exits 0) before Claude Code would kill it
                assert event.deadline_s < handler["timeout"]
                seen.add(command)
    assert seen == set(EVENTS) == subcommands
    assert config["hooks"]["SessionStart"][0]["matcher"].split("|").count("compact") == 1


def test_mcp_server_entry_runs_memoryd_mcp() -> None:
    config = load(PLUGIN / ".mcp.json")
    jsonschema.validate(config, MCP_SCHEMA)
    server = config["mcpServers"]["memoryd"]
    assert server["command"] == "memoryd" and server["args"][0] in commands(memoryd_cli())


def frontmatter(path: Path) -> dict[str, str]:
    text = path.read_text(encoding="utf-8")
    match = re.match(r"^---\n(.*?)\n---\n", text, flags=re.DOTALL)
    assert match, f"{path} has no frontmatter"
    fields = {}
    for line in match.group(1).splitlines():
        key, _, value = line.partition(":")
        fields[key.strip()] = value.strip().strip('"')
    return fields


def test_skills_have_their_frontmatter() -> None:
    skills = sorted((PLUGIN / "skills").iterdir())
    assert [s.name for s in skills] == ["memory-recall", "memory-store"]
    for skill in skills:
        fields = frontmatter(skill / "SKILL.md")
        assert fields["name"] == skill.name and re.fullmatch(KEBAB, skill.name)
        assert len(skill.name) <= 64
        assert 20 <= len(fields["description"]) <= 1024
        body = (skill / "SKILL.md").read_text(encoding="utf-8")
        tool = "memory_search" if skill.name == "memory-recall" else "memory_store"
        assert f"`{tool}`" in body
