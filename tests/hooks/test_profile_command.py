"""``memoryd profile``: the profile the SessionStart hook injects, for a person or a script."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from memoryd.cli import app
from memoryd.embed.local import LocalEmbedder
from memoryd.sdk import Memory


def test_profile_human_and_json(home: Path, embedder: LocalEmbedder) -> None:
    runner = CliRunner()
    empty = runner.invoke(app, ["--home", str(home), "profile"])
    assert empty.exit_code == 0 and "no profile yet" in empty.output
    with Memory(home, embedder=embedder) as memory:
        memory.add("The user is a backend engineer at Acme", category="profile")
        memory.add("Prefers [bold]tabs[/bold] over spaces", category="preferences")
        memory.add("Shipped the billing migration", category="events")
        memory.add("Ana owns billing", category="entities")  # neither stable nor recent context

    human = runner.invoke(app, ["--home", str(home), "profile"])
    assert human.exit_code == 0, human.output
    assert "About the user" in human.output and "Recently" in human.output
    assert "Prefers [bold]tabs[/bold] over spaces" in human.output  # shown as written
    assert "Ana owns billing" not in human.output

    as_json = runner.invoke(app, ["--home", str(home), "--json", "profile", "-q", "indentation"])
    assert as_json.exit_code == 0, as_json.output
    data = json.loads(as_json.output)
    assert set(data) == {"static_facts", "dynamic_context", "search_results", "profile"}
    assert sorted(data["static_facts"]) == [
        "Prefers [bold]tabs[/bold] over spaces",
        "The user is a backend engineer at Acme",
    ]
    assert data["dynamic_context"] == ["Shipped the billing migration"]
    assert data["search_results"][0]["memory"]["content"] == "Prefers [bold]tabs[/bold] over spaces"
