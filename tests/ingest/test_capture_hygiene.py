"""What capture keeps out of recall: repeats, tool output, recalled context, bookkeeping tags."""

from __future__ import annotations

import io
import json
import sqlite3
from pathlib import Path

import pytest

from memoryd.errors import ValidationError
from memoryd.ingest.capture import REPEAT_WINDOW
from memoryd.inject import render_context
from memoryd.models import TOOL_OUTPUT_MARK
from memoryd.portability import export_jsonl, import_jsonl
from memoryd.privacy import redact, strip_recall
from memoryd.service import MemoryService
from memoryd.store import DB_FILENAME, SQLiteStore
from memoryd.store.database import migration_scripts

OMEM = (
    "<omem-context>\nTreat every memory below as historical context only.\n\n"
    "[Preferences]\n  - (2 days ago [home]) Sam lives in Porto\n</omem-context>"
)


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        (f"{OMEM}\nWhat should I cook?", "What should I cook?"),
        (f"Before {OMEM} after", "Before after"),
        (OMEM[:120], ""),  # cut off before its close tag: removed to the end
        ("<OMEM-CONTEXT>x</omem-context>tail", "tail"),
        ("<relevant-memories>\n- a\n</relevant-memories>\nhi", "hi"),
        ("<supermemory-context>a</supermemory-context>b", "b"),
        ("no block <omem-contextual> here", "no block <omem-contextual> here"),
        ("a <b>bold</b> word", "a <b>bold</b> word"),
    ],
)
def test_recall_blocks_are_removed(text: str, kept: str) -> None:
    assert strip_recall(text).strip() == kept


def test_memoryds_own_fence_is_removed_and_private_still_redacted() -> None:
    fenced = render_context([{"content": "Sam lives in Porto", "category": "profile"}])
    assert redact(fenced) is None
    assert redact(f"{fenced}\nmy pin is <private>1234</private>") == "my pin is [REDACTED]"


def test_a_direct_memory_of_only_recalled_context_is_refused(service: MemoryService) -> None:
    with pytest.raises(ValidationError, match="recalled context"):
        service.add(OMEM)
    assert service.add(f"{OMEM}\nSam likes tea").content == "Sam likes tea"


def test_repeats_without_a_session_are_stored_once_within_the_window(
    service: MemoryService, home: Path
) -> None:
    turns = [{"role": "user", "content": "The deploy key rotates monthly"}]
    assert service.ingest(turns).stored_count == 1
    assert service.ingest(turns).stored_count == 0
    # the same words from the assistant are another turn
    assert service.ingest([{**turns[0], "role": "assistant"}]).stored_count == 1
    # with a session of their own, words said elsewhere are stored in it
    assert service.ingest(turns, session_id="s-2").stored_count == 1
    # past the window, the same words are said again
    with sqlite3.connect(home / DB_FILENAME) as conn:
        conn.execute(
            "UPDATE session_messages SET stored_at = stored_at - ?",
            (int(REPEAT_WINDOW.total_seconds() * 1e6) + 1,),
        )
    assert service.ingest(turns).stored_count == 1


def test_tool_output_is_kept_unembedded_and_found_only_when_asked(
    service: MemoryService,
) -> None:
    result = service.ingest(
        [
            {"role": "user", "content": "Find a sushi place for tonight"},
            {"role": "toolResult", "content": "Sushi Zen: sushi, sashimi, open until 23:00"},
            {"role": "tool", "content": "Sushi Bar Ika: sushi and ramen"},
        ]
    )
    assert result.stored_count == 3
    tool = [m for m in service.list_memories(memory_type="session")[0] if m.marks]
    assert {m.content.split(":")[0] for m in tool} == {"toolResult", "tool"}
    assert all(m.marks == [TOOL_OUTPUT_MARK] and m.tags == [] for m in tool)
    assert service.store.vectors_of([m.id for m in tool]) == {}
    found = [r.memory.content for r in service.search("sushi").results]
    assert found and not any(c.startswith(("toolResult:", "tool:")) for c in found)
    asked = [r.memory.content for r in service.search("sushi", include_tool_output=True).results]
    assert any(c.startswith("toolResult:") for c in asked)


def test_distilled_bookkeeping_is_in_marks_and_exported(service: MemoryService) -> None:
    task = service.ingest(
        [{"role": "user", "content": "I prefer pnpm over npm"}], mode="smart", tags=["cc"]
    )
    service.start_worker()
    assert service.wait_for_task(task.task_id)["status"] == "completed"
    insights = service.list_memories(memory_type="insight")[0]
    assert insights
    assert all(not t.startswith(("slot:", "value:", "polarity:")) for m in insights for t in m.tags)
    assert any(mark.startswith("slot:") for m in insights for mark in m.marks)
    out = io.StringIO()
    export_jsonl(service, out)
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    exported = [r["memory"] for r in lines if r.get("type") == "memory"]
    assert any(mark.startswith("slot:") for m in exported for mark in m["marks"])


def test_an_export_from_before_marks_imports_its_bookkeeping_as_marks(
    service: MemoryService, tmp_path: Path, embedder: object
) -> None:
    service.add("The build uses pnpm", memory_type="insight", tags=["cc"])
    out = io.StringIO()
    export_jsonl(service, out)
    legacy = []
    for line in out.getvalue().splitlines():
        record = json.loads(line)
        if record.get("type") == "memory":
            memory = record["memory"]
            memory["tags"] = ["cc", "slot:preference:package_manager", "value:pnpm"]
            del memory["marks"]
        legacy.append(json.dumps(record))
    with MemoryService(tmp_path / "other", embedder=embedder) as other:  # type: ignore[arg-type]
        assert import_jsonl(other, io.StringIO("\n".join(legacy)))["imported"] == 1
        (memory,) = other.list_memories(memory_type="insight")[0]
        assert memory.tags == ["cc"]
        assert memory.marks == ["slot:preference:package_manager", "value:pnpm"]


def test_the_migration_moves_bookkeeping_tags_into_marks(tmp_path: Path) -> None:
    path = tmp_path / DB_FILENAME
    scripts = migration_scripts()
    assert scripts[6].name.startswith("0007_")
    with sqlite3.connect(path) as conn:
        for number, script in enumerate(scripts[:6], start=1):
            conn.executescript(script.read_text(encoding="utf-8"))
            conn.execute(f"PRAGMA user_version = {number}")
        columns = "id, tenant_id, space_id, content, category, memory_type, state, tier, "
        columns += "importance, confidence, tags, created_at, updated_at"
        rows = [
            ("a", "insight", '["food","slot:diet:vegetarian","value:yes","polarity:negative"]'),
            ("b", "pinned", '["slot:mine"]'),  # a user's own tag on a direct memory stays
            ("c", "insight", '["food"]'),
        ]
        for memory_id, kind, tags in rows:
            conn.execute(
                f"INSERT INTO memories ({columns}) VALUES "
                "(?, 't', 'personal/t', 'x', 'preferences', ?, 'active', 'peripheral', "
                "0.5, 0.5, ?, 0, 0)",
                (memory_id, kind, tags),
            )
    store = SQLiteStore(path)
    try:
        got = dict(
            ((r[0]), (json.loads(r[1]), json.loads(r[2])))
            for r in store.conn.execute("SELECT id, tags, marks FROM memories ORDER BY id")
        )
    finally:
        store.close()
    assert got == {
        "a": (["food"], ["slot:diet:vegetarian", "value:yes", "polarity:negative"]),
        "b": (["slot:mine"], []),
        "c": (["food"], []),
    }
