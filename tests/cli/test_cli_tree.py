"""A command builds only its own part of the command tree: the same command, faster."""

from __future__ import annotations

import typer

from memoryd.cli import app
from memoryd.cli.app import invoked, only


def test_each_command_is_built_alone_as_the_whole_tree_builds_it() -> None:
    whole = typer.main.get_command(app)
    assert isinstance(whole, typer.core.TyperGroup) and len(whole.commands) > 20
    for name, command in whole.commands.items():
        alone = typer.main.get_command(only(name))
        assert isinstance(alone, typer.core.TyperGroup)
        assert list(alone.commands) == [name]
        built = alone.commands[name]
        assert [p.name for p in built.params] == [p.name for p in command.params]
        assert sorted(getattr(built, "commands", {})) == sorted(getattr(command, "commands", {}))
        assert [p.name for p in alone.params] == [p.name for p in whole.params]  # global options


def test_help_no_command_or_an_unknown_one_get_the_whole_tree() -> None:
    assert only(None) is app
    assert only("lst") is app  # click suggests "list" from the whole tree


def test_the_command_is_the_first_word_past_the_global_options() -> None:
    assert invoked(["--home", "/tmp/h", "--json", "list", "--limit", "3"]) == "list"
    assert invoked(["--user", "ana", "--database", "postgresql://x/y", "stats"]) == "stats"
    assert invoked(["--home=/tmp/h", "get", "abcd"]) == "get"
    assert invoked(["--json"]) is None
    assert invoked(["--", "list"]) is None
    assert invoked(["--help"]) is None
