"""The real ``memoryd`` console script, run as a subprocess against temporary homes.

Each run loads the model (about a second), so the tests share one populated
home where they only read, and a fresh home only where they write.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest


def memoryd_command() -> list[str]:
    """The installed console script next to this interpreter, else the module."""
    script = Path(sys.executable).with_name("memoryd")
    if script.is_file():
        return [str(script)]
    return [sys.executable, "-m", "memoryd.cli"]


@dataclass
class Result:
    code: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)


def run(home: Path | None, *args: str, env: dict[str, str] | None = None) -> Result:
    """``memoryd ARGS`` with MEMORYD_HOME=home, no other memoryd settings, wide output."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("MEMORYD_")}
    environ.update(COLUMNS="200", NO_COLOR="1", PYTHONIOENCODING="utf-8")
    if home is not None:
        environ["MEMORYD_HOME"] = str(home)
    environ.update(env or {})
    proc = subprocess.run(
        [*memoryd_command(), *args],
        env=environ,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
    )
    return Result(proc.returncode, proc.stdout, proc.stderr)


def ok(home: Path | None, *args: str) -> Result:
    result = run(home, *args)
    assert result.code == 0, (args, result.out, result.err)
    return result


def ok_json(home: Path | None, *args: str) -> Any:
    return ok(home, "--json", *args).json()


@dataclass
class Populated:
    home: Path
    berlin: dict[str, Any]
    coffee: dict[str, Any]
    tea: dict[str, Any]


@pytest.fixture(scope="module")
def populated(tmp_path_factory: pytest.TempPathFactory) -> Populated:
    """A home with three memories; tests using it must not write to it."""
    home = tmp_path_factory.mktemp("cli") / "home"
    berlin = ok_json(
        home, "add", "I moved to Berlin in 2024", "--category", "profile", "-t", "city"
    )
    coffee = ok_json(home, "add", "I prefer dark roast coffee in the morning")
    tea = ok_json(home, "add", "我喜欢喝绿茶", "--tag", "drink", "--importance", "0.9")
    return Populated(home, berlin, coffee, tea)


# ---------------------------------------------------------------------- search


def test_add_json_returns_the_full_memory(populated: Populated) -> None:
    berlin = populated.berlin
    assert berlin["content"] == "I moved to Berlin in 2024"
    assert berlin["category"] == "profile"
    assert berlin["tags"] == ["city"]
    assert berlin["memory_type"] == "pinned"
    assert berlin["state"] == "active"
    assert populated.tea["importance"] == 0.9
    assert (populated.home / "memoryd.db").is_file()


def test_search_finds_the_move_first(populated: Populated) -> None:
    data = ok_json(populated.home, "search", "where does the user live")
    assert "trace" not in data
    results = data["results"]
    assert results[0]["memory"]["id"] == populated.berlin["id"]
    assert results[0]["memory"]["content"] == "I moved to Berlin in 2024"
    scores = [r["score"] for r in results]
    assert scores == sorted(scores, reverse=True)
    assert all(0.0 <= s <= 1.0 for s in scores)


def test_search_chinese_memory_by_a_chinese_word(populated: Populated) -> None:
    data = ok_json(populated.home, "search", "绿茶", "--limit", "1")
    assert len(data["results"]) == 1
    assert data["results"][0]["memory"]["id"] == populated.tea["id"]
    # --json keeps non-ASCII readable
    assert "我喜欢喝绿茶" in ok(populated.home, "--json", "get", populated.tea["id"]).out


def test_search_human_shows_a_table(populated: Populated, STAGES: list[str]) -> None:
    out = ok(populated.home, "search", "coffee in the morning", "--trace").out
    assert "score" in out
    assert "dark roast coffee" in out
    assert populated.coffee["id"][:8] in out
    for stage in STAGES:
        assert stage in out


def test_search_trace_json_has_every_stage_of_the_recipe(
    populated: Populated, STAGES: list[str]
) -> None:
    data = ok_json(populated.home, "search", "coffee", "--trace", "--tag", "drink")
    assert [s["name"] for s in data["trace"]["stages"]] == STAGES
    # the tag filter leaves only the tea
    assert [r["memory"]["id"] for r in data["results"]] == [populated.tea["id"]]
    assert data["trace"]["final_count"] == 1


# ---------------------------------------------------------------------- reads


def test_list_json(populated: Populated) -> None:
    data = ok_json(populated.home, "list", "--limit", "2", "--sort", "created_at")
    assert data["total_count"] == 3
    assert data["limit"] == 2
    assert data["offset"] == 0
    # newest first by default
    assert [m["id"] for m in data["memories"]] == [populated.tea["id"], populated.coffee["id"]]


def test_list_human_filters_by_category(populated: Populated) -> None:
    out = ok(populated.home, "list", "--category", "profile").out
    assert "I moved to Berlin in 2024" in out
    assert "coffee" not in out
    assert "1 of 1" in out


def test_get_json_and_human(populated: Populated) -> None:
    memory_id = populated.berlin["id"]
    got = ok_json(populated.home, "get", memory_id)
    # searches by other tests may have counted a recall (and trusted it more); nothing else changes
    recall = {"access_count", "last_accessed_at", "confidence"}
    assert {k: v for k, v in got.items() if k not in recall} == {
        k: v for k, v in populated.berlin.items() if k not in recall
    }
    out = ok(populated.home, "get", memory_id).out
    assert memory_id in out
    assert "I moved to Berlin in 2024" in out
    assert "profile" in out
    assert '["city"]' in out


# ---------------------------------------------------------------------- writes


def test_update_forget_history_stats(tmp_path: Path) -> None:
    home = tmp_path / "home"
    first = ok_json(home, "add", "I live in Paris", "--category", "profile")
    second = ok(home, "add", "I own a red bicycle").out
    assert second.startswith("added ")
    second_id = ok_json(home, "get", second.split()[-1])["id"]  # the short id a person sees

    updated = ok_json(
        home, "update", first["id"], "--content", "I live in Lisbon", "-t", "city", "-t", "home"
    )
    assert updated["id"] == first["id"]
    assert updated["content"] == "I live in Lisbon"
    assert updated["l2_content"] == "I live in Lisbon"
    assert updated["tags"] == ["city", "home"]
    assert updated["version"] == 2

    # the new content is what search finds
    found = ok_json(home, "search", "Lisbon")["results"]
    assert found[0]["memory"]["id"] == first["id"]

    out = ok(home, "update", first["id"], "--importance", "0.8", "--state", "archived").out
    assert f"updated {first['id']}" in out
    # archived: kept and listed, but out of search
    assert first["id"] not in [
        r["memory"]["id"] for r in ok_json(home, "search", "Lisbon")["results"]
    ]
    archived = ok_json(home, "list", "--state", "archived")["memories"]
    assert [m["id"] for m in archived] == [first["id"]]

    history = ok_json(home, "history", first["id"])
    assert [h["action"] for h in history] == ["create", "update", "update"]
    assert history[0]["old"] is None
    assert history[0]["new"]["content"] == "I live in Paris"
    assert history[1]["old"]["content"] == "I live in Paris"
    assert history[1]["new"]["content"] == "I live in Lisbon"
    assert history[2]["new"]["state"] == "archived"
    assert history[2]["new"]["importance"] == 0.8
    assert all(h["at"].endswith("+00:00") for h in history)

    human_history = ok(home, "history", first["id"]).out
    actions = [line.split()[-1] for line in human_history.splitlines() if line[:1].isdigit()]
    assert actions == ["create", "update", "update"]
    assert "I live in Paris" in human_history

    forgotten = ok_json(home, "forget", second_id)
    assert forgotten == {"status": "deleted", "id": second_id}
    # soft delete: still readable, no longer listed or searched
    assert ok_json(home, "get", second_id)["state"] == "deleted"
    listed = ok_json(home, "list")
    assert listed["total_count"] == 1
    assert [m["id"] for m in listed["memories"]] == [first["id"]]
    found = ok_json(home, "search", "red bicycle")["results"]
    assert second_id not in [r["memory"]["id"] for r in found]
    assert ok_json(home, "history", second_id)[-1]["action"] == "state:deleted"

    stats = ok_json(home, "stats")
    assert stats["total"] == 1
    assert stats["by_state"] == {"archived": 1, "deleted": 1}  # deleted ones are counted here
    assert stats["by_category"] == {"profile": 1}
    assert stats["by_type"] == {"pinned": 1}
    assert stats["embedding_model"] == "all-MiniLM-L6-v2-onnx-int8"
    assert Path(stats["home"]) == home

    human_stats = ok(home, "stats").out
    assert "total" in human_stats
    state_rows = [line.split("│")[1:4] for line in human_stats.splitlines() if "archived" in line]
    assert [[cell.strip() for cell in row] for row in state_rows] == [["state", "archived", "1"]]
    assert "{" not in human_stats  # tables, not JSON in cells


def test_forget_human(tmp_path: Path) -> None:
    home = tmp_path / "home"
    memory_id = ok_json(home, "add", "temporary note")["id"]
    assert f"forgotten {memory_id}" in ok(home, "forget", memory_id).out
    assert "no memories matched" in ok(home, "search", "temporary note").out


def test_key_upsert_replaces_and_says_so(tmp_path: Path) -> None:
    home = tmp_path / "home"
    first = ok_json(home, "add", "I drive a Volvo", "--key", "car")
    out = ok(home, "add", "I drive a Tesla", "--key", "car").out
    assert f"replaced {first['id'][:8]} with " in out and "(key car)" in out
    second_id = ok_json(home, "get", out.split(" with ")[1].split()[0])["id"]
    assert ok_json(home, "get", second_id)["content"] == "I drive a Tesla"
    assert ok_json(home, "get", first["id"])["superseded_by"] == second_id
    assert [h["action"] for h in ok_json(home, "history", first["id"])] == ["create", "supersede"]
    found = ok_json(home, "search", "which car")["results"]
    assert [r["memory"]["id"] for r in found] == [second_id]


def test_the_same_text_twice_is_one_memory(tmp_path: Path) -> None:
    home = tmp_path / "home"
    first = ok_json(home, "add", "My locker code is 4711")
    out = ok(home, "add", "My locker code is 4711").out
    assert out.split() == ["already", "remembered", first["id"][:8]]
    again = ok_json(home, "add", "My locker code is 4711")
    assert again["id"] == first["id"] and again["access_count"] == 2
    assert ok_json(home, "list")["total_count"] == 1


# ---------------------------------------------------------------------- errors


def test_get_unknown_id(populated: Populated) -> None:
    result = run(populated.home, "get", "nope")
    assert result.code == 1
    assert result.out == ""
    assert "not found" in result.err
    assert "nope" in result.err
    assert "Traceback" not in result.err


def test_get_unknown_id_json(populated: Populated) -> None:
    result = run(populated.home, "--json", "get", "nope")
    assert result.code == 1
    error = result.json()["error"]
    assert error["code"] == "not_found"
    assert "nope" in error["message"]


def test_add_empty_content(tmp_path: Path) -> None:
    result = run(tmp_path / "home", "add", "")
    assert result.code == 1
    assert "content cannot be empty" in result.err
    assert "Traceback" not in result.err


def test_add_bogus_category_names_the_allowed_values(tmp_path: Path) -> None:
    result = run(tmp_path / "home", "add", "x", "--category", "bogus")
    assert result.code == 2  # a malformed option
    assert "bogus" in result.err
    for allowed in ("profile", "preferences", "entities", "events", "cases", "patterns"):
        assert allowed in result.err


def test_json_errors_are_an_error_object(tmp_path: Path) -> None:
    result = run(tmp_path / "home", "--json", "add", "x", "--category", "bogus")
    assert result.code == 2
    data = result.json()
    assert set(data) == {"error"}
    assert set(data["error"]) == {"code", "message"}
    assert data["error"]["code"] == "validation_error"
    assert "patterns" in data["error"]["message"]


def test_bad_date_is_a_usage_error(tmp_path: Path) -> None:
    result = run(tmp_path / "home", "add", "x", "--valid-from", "yesterday-ish")
    assert result.code == 2
    assert "Invalid value for '--valid-from'" in result.err
    assert "not an ISO 8601 date" in result.err


# ---------------------------------------------------------------------- --home


def test_home_option_overrides_the_env_var(tmp_path: Path) -> None:
    env_home, option_home = tmp_path / "from-env", tmp_path / "from-option"
    added = ok_json(env_home, "--home", str(option_home), "add", "stored under --home")
    assert (option_home / "memoryd.db").is_file()
    assert not (env_home / "memoryd.db").exists()
    assert ok_json(None, "--home", str(option_home), "get", added["id"])["id"] == added["id"]
    assert ok_json(env_home, "list")["total_count"] == 0


def test_invalid_setting_is_a_clear_error(tmp_path: Path) -> None:
    result = run(tmp_path / "home", "--json", "list", env={"MEMORYD_EMBEDDER": "bogus"})
    assert result.code == 1
    assert "Traceback" not in result.err
    error = result.json()["error"]
    assert error["code"] == "validation_error"
    assert "embedder" in error["message"]
