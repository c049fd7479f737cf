"""``memoryd add`` with a change of a known fact, through the real console script."""

from __future__ import annotations

from pathlib import Path

from test_cli import run


def test_add_supersedes_what_it_changes_and_says_so(tmp_path: Path) -> None:
    home = tmp_path / "home"
    berlin = run(home, "--json", "add", "I live in Berlin", "--category", "profile").json()
    moved = run(home, "add", "I moved to Lisbon", "--category", "profile")
    assert moved.code == 0, moved.err
    assert f"(supersedes {berlin['id'][:8]})" in moved.out
    assert all(len(line) <= 80 for line in moved.out.splitlines())
    old = run(home, "--json", "get", berlin["id"]).json()
    assert old["superseded_by"] is not None
    note = run(home, "--json", "add", "Standup is at 9").json()
    later = run(home, "--json", "add", "Standup is at 10", "--replaces", note["id"]).json()
    assert later["relations"][0]["target_id"] == note["id"]
    missing = run(home, "add", "x", "--replaces", "nope")
    assert missing.code == 1 and "not found" in (missing.err + missing.out).lower()


def test_json_may_follow_the_command(tmp_path: Path) -> None:
    home = tmp_path / "home"
    run(home, "add", "I like green tea")
    after = run(home, "list", "--json")
    assert after.code == 0, after.err
    assert after.json()["memories"][0]["content"] == "I like green tea"
    literal = run(home, "--json", "add", "--", "--json")  # after --, it is the content
    assert literal.json()["content"] == "--json"
