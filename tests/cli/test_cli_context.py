"""``memoryd context …``: bootstrap, grep, expand, assemble from a shell."""

from __future__ import annotations

import json
from pathlib import Path

from test_cli import ok, run


def test_context_commands(tmp_path: Path) -> None:
    home = tmp_path / "home"
    transcript = tmp_path / "chat.json"
    messages = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"Step {i}: port {8000 + i}."}
        for i in range(12)
    ]
    transcript.write_text(json.dumps(messages), encoding="utf-8")
    booted = ok(home, "--json", "context", "bootstrap", "c1", str(transcript)).json()
    assert booted["format"] == "json" and booted["stored"] == 12
    again = ok(home, "--json", "context", "bootstrap", "c1", str(transcript)).json()
    assert again["stored"] == 0
    hits = ok(home, "--json", "context", "grep", "c1", "port 8003").json()["hits"]
    assert hits[0]["snippet"] == "Step 3: port 8003."
    expanded = ok(home, "--json", "context", "expand", "c1", "--summary", hits[0]["id"]).json()
    assert expanded["messages"][0]["content"] == "Step 3: port 8003."
    assembled = ok(home, "--json", "context", "assemble", "c1", "--budget", "2000").json()
    assert assembled["messages"][-1]["content"] == "Step 11: port 8011."
    # nothing ingested into it yet: recall alone, not an error (a host's first prompt)
    fresh = ok(home, "--json", "context", "assemble", "nope", "--query", "port 8003").json()
    assert [m["role"] for m in fresh["messages"]] == ["system"], fresh
    assert "port 8003" in fresh["messages"][0]["content"] and fresh["summaries"] == 0
    missing = run(home, "context", "expand", "nope", "--query", "port")
    assert missing.code == 1 and "not found: conversation nope" in missing.err


def test_a_person_gets_tables_and_lines_and_json_only_when_asked(tmp_path: Path) -> None:
    home = tmp_path / "home"
    said = ok(home, "context", "ingest", "c2", "The deploy window is Friday at 16:00.")
    assert said.out.strip() == "stored 1, 0 repeated"
    for args in (("list",), ("show", "c2"), ("assemble", "c2"), ("grep", "c2", "deploy")):
        shown = ok(home, "context", *args).out
        assert not shown.lstrip().startswith("{"), (args, shown)  # no JSON unless asked
    assert "Friday at 16:00" in ok(home, "context", "assemble", "c2").out
    listed = ok(home, "--json", "context", "list").json()["conversations"]
    # times as everywhere else: ISO 8601, not microseconds
    assert listed[0]["updated_at"].endswith("+00:00") and "T" in listed[0]["updated_at"]
