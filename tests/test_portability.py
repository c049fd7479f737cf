"""Export and import: a round trip into an empty home changes nothing a caller can see."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from memoryd.embed.local import LocalEmbedder
from memoryd.errors import ValidationError
from memoryd.portability import FORMAT, FORMAT_VERSION, export_jsonl, import_jsonl
from memoryd.service import MemoryService
from memoryd.store import MemoryFilter
from memoryd.store.rows import to_us

NOW = datetime(2025, 6, 1, 12, 0, tzinfo=UTC)
QUERIES = [
    "where does the user live",
    "coffee",
    "what did I buy",
    "绿茶",
    "pets",
    "Anna",
    "Hamburg",
]


def all_memories(service: MemoryService) -> list[dict[str, Any]]:
    """Every memory in every state, as its wire form, in insertion order."""
    return [m.to_json() for m in service.store.iter_all(service.tenant_id, [service.space_id])]


def search(service: MemoryService, query: str) -> list[tuple[str, float]]:
    response = service.search(query, now=NOW, touch=False)
    return [(r.memory.id, r.score) for r in response.results]


def export_text(service: MemoryService) -> str:
    out = io.StringIO()
    export_jsonl(service, out)
    return out.getvalue()


def import_text(service: MemoryService, text: str) -> dict[str, int]:
    return import_jsonl(service, io.StringIO(text))


@pytest.fixture
def source(service: MemoryService) -> MemoryService:
    """A store with every kind of state an export has to carry."""
    svc = service
    berlin = svc.add(
        "I moved to Berlin in 2024",
        category="profile",
        tags=["city", "move"],
        source="chat:onboarding",
        importance=0.8,
        valid_from=datetime(2024, 3, 1, tzinfo=UTC),
    )
    coffee = svc.add("I prefer dark roast coffee", key="coffee", tier="core", confidence=0.9)
    sister = svc.add("My sister Anna lives in Munich", category="entities")
    svc.add("我喜欢喝绿茶", category="preferences", expires_at=datetime(2099, 1, 1, tzinfo=UTC))
    cat = svc.add("We adopted a cat named Miso", category="events", agent_id="agent-7")
    gone = svc.add("My old phone number was 555-0100")
    old = svc.add("I used to live in Paris", category="profile")

    svc.update(sister.id, content="My sister Anna lives in Hamburg now")
    svc.update(
        berlin.id,
        relations=[
            {"relation_type": "supersedes", "target_id": old.id, "context_label": "moved"},
            {"relation_type": "supports", "target_id": sister.id},
        ],
    )
    svc.update(old.id, superseded_by=berlin.id, invalidated_at=datetime(2024, 3, 1, tzinfo=UTC))
    svc.update(coffee.id, state="archived")
    svc.delete(gone.id)
    # recalls: an access count and a last access time
    svc.store.touch([cat.id, berlin.id], to_us(NOW - timedelta(days=3)) or 0)
    svc.ingest(
        [
            {"role": "user", "content": "I just bought a new bicycle"},
            {"role": "assistant", "content": "Nice! What kind of bicycle?"},
        ],
        session_id="s1",
        agent_id="agent-7",
        dates=datetime(2025, 5, 20, 14, 2, tzinfo=UTC),
    )
    svc.ingest([{"role": "user", "content": "Remind me to water the plants"}], session_id="s2")
    return svc


@pytest.fixture
def target(tmp_path: Path, embedder: LocalEmbedder) -> Iterator[MemoryService]:
    """An empty second home."""
    svc = MemoryService(tmp_path / "other", embedder=embedder)
    yield svc
    svc.close()


def test_export_starts_with_a_header_and_holds_every_state(source: MemoryService) -> None:
    lines = [json.loads(line) for line in export_text(source).splitlines()]
    header = lines[0]
    assert header == {
        "type": "header",
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "tenant_id": "local",
        "space_id": "personal/local",
        "embedding_model": "all-MiniLM-L6-v2-onnx-int8",
    }
    kinds = [line["type"] for line in lines]
    assert kinds.count("memory") == 10
    assert kinds.count("message") == 3
    states = {line["memory"]["state"] for line in lines if line["type"] == "memory"}
    assert states == {"active", "archived", "deleted"}
    # no vectors: they are re-computed on import
    assert all("vector" not in line.get("memory", {}) for line in lines)


def test_round_trip_keeps_every_memory_field(source: MemoryService, target: MemoryService) -> None:
    before = all_memories(source)
    result = import_text(target, export_text(source))
    assert result == {"imported": 10, "skipped": 0, "key_conflicts": 0, "messages": 3}
    after = all_memories(target)
    assert after == before
    # spot checks of what is easiest to lose
    by_content = {m["content"]: m for m in after}
    berlin = by_content["I moved to Berlin in 2024"]
    assert [r["relation_type"] for r in berlin["relations"]] == ["supersedes", "supports"]
    assert berlin["relations"][0]["context_label"] == "moved"
    assert berlin["access_count"] == 1
    assert berlin["last_accessed_at"] is not None
    assert berlin["version"] == 2
    assert by_content["I used to live in Paris"]["superseded_by"] == berlin["id"]
    assert by_content["I prefer dark roast coffee"]["state"] == "archived"
    assert by_content["My old phone number was 555-0100"]["state"] == "deleted"
    assert by_content["My sister Anna lives in Hamburg now"]["version"] == 2
    # get() sees each one the same way in both homes
    for memory in before:
        assert target.get(memory["id"]).to_json() == memory


def test_round_trip_keeps_session_messages(source: MemoryService, target: MemoryService) -> None:
    import_text(target, export_text(source))
    ignore = {"stored_at"}  # when this store wrote the row; see the next test
    before = [{k: v for k, v in m.items() if k not in ignore} for m in source.session_messages()]
    after = [{k: v for k, v in m.items() if k not in ignore} for m in target.session_messages()]
    assert after == before
    assert [m["session_id"] for m in after] == ["s1", "s1", "s2"]
    assert after[0]["said_at"] == to_us(datetime(2025, 5, 20, 14, 2, tzinfo=UTC))
    assert after[0]["agent_id"] == "agent-7"
    assert after[2]["said_at"] is None
    # each raw message still points at its (imported) session memory
    for message in after:
        assert target.get(message["memory_id"]).memory_type.value == "session"


def test_round_trip_keeps_message_stored_at(source: MemoryService, target: MemoryService) -> None:
    # the export writes each raw message's ``stored_at`` and import keeps it
    # (add_session_messages always stamps "now"), so the round trip is not lossless.
    import_text(target, export_text(source))
    before = [m["stored_at"] for m in source.session_messages()]
    after = [m["stored_at"] for m in target.session_messages()]
    assert after == before


def test_round_trip_gives_the_same_search_results(
    source: MemoryService, target: MemoryService
) -> None:
    import_text(target, export_text(source))
    for query in QUERIES:
        expected = search(source, query)
        assert expected, query
        assert search(target, query) == expected, query


def test_round_trip_keeps_every_history(source: MemoryService, target: MemoryService) -> None:
    """History comes along: each memory's rows, not a fresh ``create``."""
    import_text(target, export_text(source))
    for memory in all_memories(source):
        assert target.history(memory["id"]) == source.history(memory["id"]), memory["content"]
    sister = next(m for m in all_memories(target) if "Hamburg" in m["content"])
    assert [h["action"] for h in target.history(sister["id"])] == ["create", "update"]


def test_round_trip_keeps_as_of_answers_of_a_key_upsert(
    service: MemoryService, target: MemoryService
) -> None:
    """A keyed add supersedes: as_of finds the old value, before and after a round trip."""
    first = service.add("I drive a Volvo", key="car")
    between = datetime.now(UTC)
    second = service.add("I drive a Tesla", key="car")
    import_text(target, export_text(service))
    for svc in (service, target):
        now = [r.memory.id for r in svc.search("what car do I drive", touch=False).results]
        then = svc.search("what car do I drive", as_of=between, touch=False).results
        assert now[0] == second.id and first.id not in now
        assert then[0].memory.id == first.id
        assert [h["action"] for h in svc.history(first.id)] == ["create", "supersede"]


def test_a_file_that_is_not_utf8_is_a_clear_error(service: MemoryService, tmp_path: Path) -> None:
    latin1 = tmp_path / "latin1.txt"
    latin1.write_bytes("Café crème, déjà vu\n".encode("latin-1"))
    binary = tmp_path / "blob.bin"
    binary.write_bytes(bytes(range(256)) * 4)
    for path in (latin1, binary):
        with pytest.raises(ValidationError) as raised, path.open(encoding="utf-8") as lines:
            import_jsonl(service, lines)
        assert "not UTF-8 text" in raised.value.message
        result = memoryd(service.home, "import", str(path))
        assert result.returncode == 1, result.stderr
        assert "not UTF-8 text" in result.stderr and "Traceback" not in result.stderr
        as_json = memoryd(service.home, "--json", "import", str(path))
        assert json.loads(as_json.stdout)["error"]["code"] == "validation_error"
    assert all_memories(service) == []


@pytest.mark.parametrize("escape", ["\\ud800", "\\uDC00", "\\udbff"])
def test_a_lone_surrogate_escape_is_refused_a_pair_is_text(
    source: MemoryService, target: MemoryService, escape: str
) -> None:
    """JSON may escape half of a surrogate pair, which no UTF-8 text can hold; an escaped
    whole pair (an emoji) is ordinary text. Only lines with such an escape are walked."""
    header, first, *rest = export_text(source).splitlines()
    record = json.loads(first)
    bad = json.dumps({**record, "memory": {**record["memory"], "content": "a"}})
    bad = bad.replace('"content": "a"', f'"content": "a{escape} b"')
    with pytest.raises(ValidationError, match="line 2 holds text that is not valid Unicode"):
        import_jsonl(target, io.StringIO("\n".join([header, bad, *rest])))
    assert all_memories(target) == []
    pair = bad.replace(escape, "\\ud83d\\ude00")
    assert import_jsonl(target, io.StringIO("\n".join([header, pair])))["imported"] == 1
    assert [m["content"] for m in all_memories(target)] == ["a\U0001f600 b"]


def test_round_trip_of_an_empty_store(service: MemoryService, target: MemoryService) -> None:
    text = export_text(service)
    assert len(text.splitlines()) == 1
    assert import_text(target, text) == {
        "imported": 0,
        "skipped": 0,
        "key_conflicts": 0,
        "messages": 0,
    }
    assert all_memories(target) == []


def test_importing_twice_skips_duplicates(source: MemoryService, target: MemoryService) -> None:
    text = export_text(source)
    import_text(target, text)
    first = all_memories(target)
    assert import_text(target, text) == {
        "imported": 0,
        "skipped": 10,
        "key_conflicts": 0,
        "messages": 0,
    }
    assert all_memories(target) == first
    assert len(target.session_messages()) == 3


def test_importing_into_the_same_store_skips_everything(source: MemoryService) -> None:
    before = all_memories(source)
    assert import_text(source, export_text(source)) == {
        "imported": 0,
        "skipped": 10,
        "key_conflicts": 0,
        "messages": 0,
    }
    assert all_memories(source) == before


def test_import_reports_progress(source: MemoryService, target: MemoryService) -> None:
    exported: list[int] = []
    out = io.StringIO()
    assert export_jsonl(source, out, exported.append) == 10
    assert sum(exported) == 10
    imported: list[int] = []
    import_jsonl(target, io.StringIO(out.getvalue()), imported.append)
    assert sum(imported) == 10
    twice = "\n".join([*out.getvalue().splitlines(), out.getvalue().splitlines()[1]])
    other = MemoryService(target.home / "twice", embedder=target.embedder)
    with other:  # a memory twice in one file is imported once
        assert import_jsonl(other, io.StringIO(twice))["skipped"] == 1
        assert len(all_memories(other)) == 10
    again: list[int] = []  # every memory skipped: the bar still reaches the end
    assert import_jsonl(target, io.StringIO(out.getvalue()), again.append)["skipped"] == 10
    assert sum(again) == 10


# ---------------------------------------------------------------------- malformed files

HEADER = json.dumps({"type": "header", "format": FORMAT, "version": FORMAT_VERSION})
MEMORY = json.dumps({"type": "memory", "memory": {"content": "a valid memory"}})


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("this is not json\n", 1, "not JSON"),
        (f"{HEADER}\n{MEMORY}\n{{broken\n", 3, "not JSON"),
        (f"{MEMORY}\n", 1, "no memoryd-export header"),
        ("[1, 2, 3]\n", 1, "no memoryd-export header"),
        ('{"type": "header", "format": "other", "version": 1}\n', 1, "not a memoryd-export"),
        (f'{{"type": "header", "format": "{FORMAT}", "version": 99}}\n', 1, "version 1 or 2"),
        (f'{HEADER}\n{MEMORY}\n{{"type": "vector"}}\n', 3, "unknown record type 'vector'"),
        (f"{HEADER}\n\n[1]\n", 3, "unknown record type"),
        (f'{HEADER}\n{{"type": "memory"}}\n', 2, "invalid memory"),
        (f'{HEADER}\n{{"type": "memory", "memory": {{"id": "x"}}}}\n', 2, "invalid memory"),
        (
            f'{HEADER}\n{{"type": "memory", "memory": {{"content": "c", "importance": 5}}}}\n',
            2,
            "invalid memory",
        ),
        (
            f'{HEADER}\n{{"type": "memory", "memory": {{"content": "c", "state": "gone"}}}}\n',
            2,
            "invalid memory",
        ),
    ],
)
def test_malformed_file_names_the_line(
    service: MemoryService, text: str, line: int, words: str
) -> None:
    with pytest.raises(ValidationError) as raised:
        import_text(service, text)
    assert f"line {line}" in raised.value.message
    assert words in raised.value.message
    assert raised.value.code == "validation_error"
    assert all_memories(service) == []


def test_malformed_message_record_names_the_line(service: MemoryService) -> None:
    text = f'{HEADER}\n{MEMORY}\n{{"type": "message", "role": "user"}}\n'
    with pytest.raises(ValidationError, match="line 3"):
        import_text(service, text)


def test_import_with_a_key_already_taken_here(
    service: MemoryService, target: MemoryService
) -> None:
    service.add("I drive a Volvo", key="car")
    service.add("I live in Berlin")
    target.add("I drive a Tesla", key="car")
    import_text(target, export_text(service))
    contents = {m["content"] for m in all_memories(target)}
    assert "I live in Berlin" in contents
    keyed, _ = target.store.list_memories(
        target.tenant_id, [target.space_id], MemoryFilter(key="car")
    )
    assert len(keyed) == 1


# ---------------------------------------------------------------------- the CLI


def memoryd(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    script = Path(sys.executable).with_name("memoryd")
    command = [str(script)] if script.is_file() else [sys.executable, "-m", "memoryd.cli"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORYD_")}
    env.update(MEMORYD_HOME=str(home), COLUMNS="200", PYTHONIOENCODING="utf-8")
    return subprocess.run(
        [*command, *args], env=env, capture_output=True, text=True, encoding="utf-8", timeout=120
    )


def test_cli_export_and_import(source: MemoryService, tmp_path: Path) -> None:
    source.close()  # the CLI opens the same file from another process
    path = tmp_path / "memories.jsonl"

    exported = memoryd(source.home, "export", str(path))
    assert exported.returncode == 0, exported.stderr
    assert f"exported 10 memories to {path}" in exported.stdout
    assert "exporting" in exported.stderr  # the progress bar
    lines = path.read_text(encoding="utf-8").splitlines()
    assert json.loads(lines[0])["type"] == "header"
    kinds = Counter(json.loads(line)["type"] for line in lines)
    assert kinds == {"header": 1, "memory": 10, "history": kinds["history"], "message": 3}
    assert kinds["history"] >= 10  # every memory's create, and the changes since

    empty = tmp_path / "empty-home"
    imported = memoryd(empty, "import", str(path))
    assert imported.returncode == 0, imported.stderr
    assert "imported 10 memories, skipped 0, 3 messages" in imported.stdout
    assert "importing" in imported.stderr

    again = memoryd(empty, "--json", "import", str(path))
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout) == {
        "imported": 0,
        "skipped": 10,
        "key_conflicts": 0,
        "messages": 0,
    }

    with MemoryService(empty) as copy, MemoryService(source.home) as original:
        assert all_memories(copy) == all_memories(original)
        for query in QUERIES[:3]:
            assert search(copy, query) == search(original, query)


def test_cli_export_to_stdout_and_json(source: MemoryService, tmp_path: Path) -> None:
    source.close()
    to_stdout = memoryd(source.home, "export", "-")
    assert to_stdout.returncode == 0, to_stdout.stderr
    lines = [json.loads(line) for line in to_stdout.stdout.splitlines()]
    assert lines[0]["format"] == FORMAT
    assert sum(line["type"] == "memory" for line in lines) == 10
    # non-ASCII content is written as it is
    assert "我喜欢喝绿茶" in to_stdout.stdout

    path = tmp_path / "out.jsonl"
    as_json = memoryd(source.home, "--json", "export", str(path))
    assert as_json.returncode == 0, as_json.stderr
    assert json.loads(as_json.stdout) == {"exported": 10, "path": str(path)}
    assert as_json.stderr == ""  # no progress bar in --json mode


def test_cli_import_of_a_malformed_file(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(f"{HEADER}\nnot json\n", encoding="utf-8")
    result = memoryd(tmp_path / "home", "--json", "import", str(path))
    assert result.returncode == 1
    error = json.loads(result.stdout)["error"]
    assert error["code"] == "validation_error"
    assert "line 2" in error["message"]

    missing = memoryd(tmp_path / "home", "import", str(tmp_path / "missing.jsonl"))
    assert missing.returncode == 2
    assert "does not exist" in missing.stderr
