"""The rough edges of the CLI, each through the real ``memoryd`` process: ids as shown, errors
instead of tracebacks, stdin, help, ingest, tasks, keys, users and delete-all."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from test_cli import memoryd_command, ok, ok_json, run

from memoryd.cli import app, main
from memoryd.embed.local import LocalEmbedder
from memoryd.service import MemoryService


def test_the_ids_a_table_shows_work_in_every_command(tmp_path: Path) -> None:
    home = tmp_path / "home"
    memory = ok_json(home, "add", "I live in Paris")
    listed = ok(home, "list").out
    short = memory["id"][:8]
    assert short in listed and memory["id"] not in listed  # tables show 8 characters
    assert ok_json(home, "get", short)["id"] == memory["id"]
    assert f"updated {memory['id']}" in ok(home, "update", short, "--content", "I live in Rome").out
    assert [h["action"] for h in ok_json(home, "history", short[:5])] == ["create", "update"]
    assert ok_json(home, "forget", short) == {"status": "deleted", "id": memory["id"]}


def test_an_ambiguous_prefix_lists_the_candidates(tmp_path: Path, embedder: LocalEmbedder) -> None:
    home = tmp_path / "home"
    with MemoryService(home, embedder=embedder) as svc:
        made = [svc.add(f"note {n}").id for n in range(2)]
        with svc.store.write() as conn:
            for old, new in zip(made, ("beef0001-x", "beef0002-x"), strict=True):
                conn.execute("UPDATE memories SET id = ? WHERE id = ?", (new, old))
    result = run(home, "get", "beef")
    assert result.code == 1
    assert "ambiguous" in result.err and "beef0001-x" in result.err and "beef0002-x" in result.err
    assert json.loads(run(home, "--json", "get", "beef").out)["error"]["code"] == "validation_error"
    assert ok_json(home, "get", "beef0002")["content"] == "note 1"


@pytest.mark.parametrize("as_json", [False, True])
def test_a_bad_home_is_an_error_not_a_traceback(tmp_path: Path, as_json: bool) -> None:
    a_file = tmp_path / "some-file.txt"
    a_file.write_text("not a directory", encoding="utf-8")
    flag = ["--json"] if as_json else []
    for args in (
        [*flag, "--home", str(a_file), "stats"],
        [*flag, "--home", "/proc/nonexist/x", "add", "x"],
    ):
        result = run(None, *args)
        assert result.code == 1, args
        assert "Traceback" not in result.err
        message = result.json()["error"]["message"] if as_json else result.err
        assert "data directory" in message


def test_under_json_a_bad_option_value_is_the_json_error(tmp_path: Path) -> None:
    home = tmp_path / "home"
    for args, words in (
        (["search", "x", "--as-of", "yesterday"], "--as-of"),
        (["list", "--limit", "lots"], "--limit"),
        (["list", "--state", "gone"], "--state"),
        (["get"], "ID"),
        (["search", "x", "--colour", "red"], "--colour"),
    ):
        result = run(home, "--json", *args)
        assert result.code == 2, args
        error = result.json()["error"]
        assert error["code"] == "validation_error" and words in error["message"], args
        assert result.err == ""


def test_dash_reads_the_content_from_stdin(tmp_path: Path) -> None:
    home = tmp_path / "home"

    def piped(text: str, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*memoryd_command(), "--home", str(home), "--json", *args],
            input=text,
            capture_output=True,
            text=True,
            encoding="utf-8",
            timeout=120,
        )

    added = piped("hi\n", "add", "-")
    assert json.loads(added.stdout)["content"] == "hi"
    long_text = "A long note. " * 12_000  # 156,000 characters: more than an argument can hold
    added = piped(long_text, "add", "-")
    assert len(json.loads(added.stdout)["content"]) == len(long_text.rstrip("\n"))
    too_long = piped("x" * 200_001, "add", "-")
    assert too_long.returncode == 1
    assert "longer than 200000 characters" in json.loads(too_long.stdout)["error"]["message"]


def test_update_with_nothing_to_change_says_so(tmp_path: Path) -> None:
    home = tmp_path / "home"
    memory = ok_json(home, "add", "I live in Paris", "--category", "profile")
    result = run(home, "update", memory["id"])
    assert result.code == 1 and "nothing to change" in result.err
    same = ok(home, "update", memory["id"], "--category", "profile").out
    assert "unchanged" in same
    history = ok_json(home, "history", memory["id"])
    assert [h["action"] for h in history] == ["create"]
    assert ok_json(home, "get", memory["id"])["version"] == 1


def test_help_has_no_bool_placeholders_and_every_option_explains_itself(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    command = typer.main.get_command(app)
    pending = [((), command)]
    undocumented = []
    while pending:
        path, cmd = pending.pop()
        for sub_name, sub in getattr(cmd, "commands", {}).items():
            pending.append(((*path, sub_name), sub))
        for param in cmd.params:
            if param.param_type_name == "option" and not getattr(param, "help", None):
                undocumented.append(f"{' '.join(path)} {param.name}")
        with pytest.raises(SystemExit) as exited:
            main([*path, "--help"])
        assert exited.value.code == 0
        shown = capsys.readouterr().out
        assert "<bool>" not in shown, path
    assert undocumented == []


def test_stats_is_tables(tmp_path: Path) -> None:
    home = tmp_path / "home"
    ok(home, "add", "I live in Paris")
    out = ok(home, "stats").out
    assert "{" not in out and "pinned" in out and "by" in out


def test_ingest_and_task_commands(tmp_path: Path) -> None:
    home = tmp_path / "home"
    chat = tmp_path / "chat.jsonl"
    chat.write_text(
        '{"role": "user", "content": "I just bought a new bicycle"}\n'
        '{"role": "assistant", "content": "Nice! What kind of bicycle?"}\n',
        encoding="utf-8",
    )
    stored = ok_json(home, "ingest", str(chat), "--session", "s1")
    assert stored["stored_count"] == 2 and stored["session_id"] == "s1"
    again = ok_json(home, "ingest", str(chat), "--session", "s1")
    assert again["stored_count"] == 0  # repeats within a session are skipped
    turns = ok_json(home, "list", "--type", "session")["memories"]
    assert {m["content"] for m in turns} == {
        "user: I just bought a new bicycle",
        "assistant: Nice! What kind of bicycle?",
    }
    assert "2 conversation turns and passages" in ok(home, "list").out

    smart = subprocess.run(
        [*memoryd_command(), "--home", str(home), "--json", "ingest", "-", "--mode", "smart"],
        input=json.dumps([{"role": "user", "content": "I prefer green tea over coffee."}]),
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
    )
    assert smart.returncode == 0, smart.stderr
    result = json.loads(smart.stdout)
    assert result["task"]["status"] == "completed" and result["task"]["facts_extracted"] >= 1
    task = ok_json(home, "task", result["task_id"][:8])
    assert task["id"] == result["task_id"] and task["status"] == "completed"
    assert "green tea" in ok(home, "search", "what do I drink").out

    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json\n", encoding="utf-8")
    refused = run(home, "ingest", str(bad))
    assert refused.code == 1 and "line 1 is not JSON" in refused.err


def test_keys_commands(tmp_path: Path) -> None:
    home = tmp_path / "home"
    created = ok_json(home, "keys", "create", "--name", "laptop")
    assert created["api_key"].startswith("mk_") and created["name"] == "laptop"
    human = ok(home, "keys", "create", "--name", "ci").out
    assert "shown only now" in human and "mk_" in human
    listed = ok_json(home, "keys", "list")["keys"]
    assert sorted(k["name"] for k in listed) == ["ci", "laptop"]
    assert all("api_key" not in k for k in listed)  # secrets are never listed
    assert created["api_key"][:10] in ok(home, "keys", "list").out
    revoked = ok_json(home, "keys", "revoke", created["id"][:8])
    assert revoked["id"] == created["id"] and revoked["revoked_at"] is not None


def test_delete_all_needs_yes(tmp_path: Path) -> None:
    home = tmp_path / "home"
    ok(home, "add", "I live in Paris")
    refused = run(home, "delete-all")
    assert refused.code == 1 and "--yes" in refused.err
    assert ok_json(home, "list")["total_count"] == 1
    assert ok_json(home, "delete-all", "--yes") == {"deleted": 1, "sessions_cleared": 0}
    assert ok_json(home, "list")["total_count"] == 0


def test_users_keep_their_memories_apart(tmp_path: Path) -> None:
    home = tmp_path / "home"
    alice = ok_json(home, "--user", "alice", "add", "My doctor is Dr. Alvarez")
    ok(home, "--user", "bob", "add", "My doctor is Dr. Brown")
    found = ok_json(home, "--user", "alice", "search", "who is my doctor")["results"]
    assert [r["memory"]["content"] for r in found] == ["My doctor is Dr. Alvarez"]
    assert ok_json(home, "list")["total_count"] == 0  # the local user has none
    assert run(home, "--user", "bob", "get", alice["id"]).code == 1
    assert ok_json(home, "--user", "alice", "get", alice["id"][:8])["tenant_id"] == "user:alice"
    bad = run(home, "--user", "not a user", "list")
    assert bad.code == 1 and "invalid user_id" in bad.err


_EMBEDDING = ("numpy", "onnxruntime", "httpx")
# what --help lists needs none of the records, the settings or the store
_RECORDS = ("pydantic", "pydantic_settings", "memoryd.store", "memoryd.hooks.resident")


@pytest.mark.parametrize(
    ("command", "heavy"),
    [(["list"], _EMBEDDING), (["stats"], _EMBEDDING), (["--help"], _EMBEDDING + _RECORDS)],
)
def test_commands_that_do_not_embed_load_neither_numpy_nor_the_model(
    tmp_path: Path, command: list[str], heavy: tuple[str, ...]
) -> None:
    """Start-up time: NumPy alone costs a command about 140 ms on 2 cores; pydantic and
    the settings about 60 ms more, which --help does without."""
    home = tmp_path / "home"
    ok(home, "list")  # the home exists
    probe = (
        "import runpy, sys\n"
        f"sys.argv = ['memoryd', '--home', {str(home)!r}, *{command!r}]\n"
        "try:\n"
        "    runpy.run_module('memoryd', run_name='__main__')\n"
        "except SystemExit:\n"
        "    pass\n"
        f"heavy = [m for m in {heavy!r} if m in sys.modules]\n"
        "print('LOADED', heavy, file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120
    )
    assert "LOADED []" in done.stderr, done.stderr[-2000:]


def test_task_delete_ends_the_task(tmp_path: Path) -> None:
    home = tmp_path / "home"
    ok_json(home, "task", "create", "launch", "--title", "Ship v2")
    ok_json(home, "task", "join", "launch", "coder")
    gone = ok_json(home, "task", "delete", "launch")
    assert gone["id"] == "launch" and gone["members"] == ["coder"]
    assert ok_json(home, "task", "list")["tasks"] == []
    again = run(home, "--json", "task", "delete", "launch")
    assert again.code != 0 and json.loads(again.out)["error"]["code"] == "not_found"


def test_mistakes_are_named_in_the_command_lines_words(tmp_path: Path) -> None:
    home = tmp_path / "home"
    empty = run(home, "search", "")
    assert empty.code == 1 and "the query is empty" in empty.err and "'q'" not in empty.err
    missing = run(home, "checkpoint", "show", "zzzz")
    assert missing.code == 1 and missing.err.count("not found") == 1 and "zzzz" in missing.err
    notes = tmp_path / "notes.md"
    notes.write_text("# Notes\n\nThe deploy runs on Fridays.\n", encoding="utf-8")
    wrong = run(home, "restore", str(notes))
    assert wrong.code == 1 and "not a memoryd backup" in wrong.err and "damaged" not in wrong.err
    document = run(home, "import", str(notes))
    assert document.code == 1 and "import-file" in document.err
    assert "not a memoryd export" in document.err
    ok(home, "import-file", str(notes))
    again = run(home, "import-file", str(notes))
    assert again.code == 1 and "--force" in again.out, again


def test_at_80_columns_a_row_is_one_line(tmp_path: Path) -> None:
    home = tmp_path / "home"
    ok(home, "add", "I keep my bike in the shed")
    doc = tmp_path / "handbook.md"
    doc.write_text("# Handbook\n\nFirst part of a long document.\n\nSecond part.\n")
    ok(home, "import-file", str(doc))
    narrow = {"COLUMNS": "80"}
    found = run(home, "search", "bike in the shed", env=narrow)
    assert found.code == 0, found.err
    rows = [line for line in found.out.splitlines() if "bike" in line]
    assert rows and "in the shed" in rows[0]  # a short memory is not wrapped
    assert not re.search(r"\d\d:\d\d", found.out)  # the date is when enough
    assert all(len(line) <= 80 for line in found.out.splitlines())
    listed = run(home, "list", env=narrow).out
    assert all(len(line) <= 80 for line in listed.splitlines())
    assert "Second part" not in listed  # a document is one row: its first line
