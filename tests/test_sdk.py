"""The Python SDK, ``from memoryd import Memory``, and how its settings are loaded."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memoryd import Memory, MemoryRecord, NotFoundError, ScoredMemory, ValidationError
from memoryd.config import CONFIG_FILENAME, Settings, default_home, load_settings
from memoryd.errors import ValidationError as MemorydValidationError
from memoryd.models import IngestResult, SearchResponse


@pytest.fixture
def mem(home: Path) -> Iterator[Memory]:
    with Memory(home) as memory:
        yield memory


# ---------------------------------------------------------------------- writes and reads


def test_add_and_get(mem: Memory) -> None:
    added = mem.add(
        "I moved to Berlin in 2024",
        category="profile",
        tags=["city"],
        importance=0.8,
        source="chat",
        valid_from=datetime(2024, 3, 1, tzinfo=UTC),
    )
    assert isinstance(added, MemoryRecord)
    got = mem.get(added.id)
    assert got.to_json() == added.to_json()
    assert got.content == "I moved to Berlin in 2024"
    assert got.category.value == "profile"
    assert got.tags == ["city"]
    assert got.importance == 0.8
    assert got.source == "chat"
    assert got.valid_from == datetime(2024, 3, 1, tzinfo=UTC)
    assert got.memory_type.value == "pinned"
    assert got.state.value == "active"


def test_search_finds_the_move_first(mem: Memory) -> None:
    berlin = mem.add("I moved to Berlin in 2024")
    mem.add("I prefer dark roast coffee in the morning")
    mem.add("My favourite band is Radiohead")
    results = mem.search("where does the user live")
    assert all(isinstance(r, ScoredMemory) for r in results)
    assert results[0].memory.id == berlin.id
    assert results[0].score == 1.0
    assert len(mem.search("where does the user live", limit=1)) == 1
    assert mem.search("coffee", category="events") == []


def test_search_finds_chinese(mem: Memory) -> None:
    tea = mem.add("我喜欢喝绿茶")
    mem.add("I moved to Berlin in 2024")
    assert mem.search("绿茶")[0].memory.id == tea.id


def test_search_sees_only_what_is_valid_now(mem: Memory) -> None:
    paris = mem.add("I lived in Paris", valid_to=datetime(2020, 1, 1, tzinfo=UTC))
    milk = mem.add("There is milk in the fridge", expires_at=datetime(2020, 1, 1, tzinfo=UTC))
    mem.add("I live in Berlin")
    found = [r.memory.id for r in mem.search("where do I live")]
    assert paris.id not in found
    assert milk.id not in [r.memory.id for r in mem.search("milk in the fridge")]


def test_search_leaves_out_facts_that_begin_later(mem: Memory) -> None:
    tokyo = mem.add("I will live in Tokyo", valid_from=datetime(2030, 1, 1, tzinfo=UTC))
    mem.add("I live in Berlin")
    assert not tokyo.is_live(datetime.now(UTC))
    assert tokyo.id not in [r.memory.id for r in mem.search("where will I live in Tokyo")]
    later = mem.search("where will I live in Tokyo", as_of=datetime(2031, 1, 1, tzinfo=UTC))
    assert tokyo.id in [r.memory.id for r in later]


def test_update_re_embeds_and_keeps_history(mem: Memory) -> None:
    memory = mem.add("I live in Paris", category="profile")
    updated = mem.update(memory.id, content="I live in Lisbon", tags=["city"], importance=0.9)
    assert updated.id == memory.id
    assert updated.content == updated.l2_content == "I live in Lisbon"
    assert updated.tags == ["city"]
    assert updated.importance == 0.9
    assert updated.version == 2
    assert mem.get(memory.id).to_json() == updated.to_json()
    assert mem.search("Lisbon")[0].memory.id == memory.id

    history = mem.history(memory.id)
    assert [h["action"] for h in history] == ["create", "update"]
    assert history[1]["old"]["content"] == "I live in Paris"
    assert history[1]["new"]["content"] == "I live in Lisbon"

    with pytest.raises(ValidationError, match="cannot be updated"):
        mem.update(memory.id, colour="blue")
    with pytest.raises(NotFoundError):
        mem.update("no-such-id", content="x")


def test_delete_is_soft(mem: Memory) -> None:
    keep = mem.add("I own a red bicycle")
    gone = mem.add("My old phone number was 555-0100")
    mem.delete(gone.id)
    assert mem.get(gone.id).state.value == "deleted"
    assert [m.id for m in mem.list()] == [keep.id]
    assert [m.id for m in mem.list(state="deleted")] == [gone.id]
    assert gone.id not in [r.memory.id for r in mem.search("phone number")]
    assert mem.history(gone.id)[-1]["action"] == "state:deleted"
    with pytest.raises(NotFoundError):
        mem.delete("no-such-id")


def test_list_filters_and_pages(mem: Memory) -> None:
    a = mem.add("alpha", category="profile", tags=["x"])
    b = mem.add("beta", category="events", tags=["x", "y"])
    c = mem.add("gamma", category="events")
    mem.update(c.id, state="archived")
    assert [m.id for m in mem.list()] == [c.id, b.id, a.id]
    assert [m.id for m in mem.list(order="asc")] == [a.id, b.id, c.id]
    assert [m.id for m in mem.list(limit=1, offset=1)] == [b.id]
    assert [m.id for m in mem.list(category="events")] == [c.id, b.id]
    assert [m.id for m in mem.list(tags=["x", "y"])] == [b.id]
    assert [m.id for m in mem.list(state="archived")] == [c.id]
    with pytest.raises(ValidationError, match="expected one of"):
        mem.list(category="bogus")


def test_errors(mem: Memory) -> None:
    with pytest.raises(NotFoundError) as raised:
        mem.get("nope")
    assert raised.value.code == "not_found"
    with pytest.raises(ValidationError, match="content cannot be empty"):
        mem.add("   ")
    with pytest.raises(ValidationError, match="profile, preferences"):
        mem.add("x", category="bogus")
    with pytest.raises(ValidationError, match="query"):
        mem.search("")


def test_explain_traces_every_stage_of_the_recipe(mem: Memory, STAGES: list[str]) -> None:
    berlin = mem.add("I moved to Berlin in 2024")
    mem.add("I prefer dark roast coffee")
    response = mem.explain("Berlin")
    assert isinstance(response, SearchResponse)
    assert response.trace is not None
    assert [s.name for s in response.trace.stages] == STAGES
    assert response.trace.final_count == len(response.results)
    assert response.results[0].memory.id == berlin.id
    stages_ms = sum(s.duration_ms for s in response.trace.stages)
    assert response.trace.total_duration_ms >= stages_ms - 0.01  # the search holds its stages
    # the plain search gives the same answer without the trace
    assert [r.memory.id for r in mem.search("Berlin")] == [r.memory.id for r in response.results]


def test_ingest_stores_each_turn(mem: Memory) -> None:
    messages = [
        {"role": "user", "content": "I just bought a new bicycle"},
        {"role": "assistant", "content": "Nice! What kind of bicycle?"},
    ]
    result = mem.ingest(messages, session_id="s1")
    assert isinstance(result, IngestResult)
    assert result.session_id == "s1"
    assert result.stored_count == 2
    assert len(result.memory_ids) == 2
    # the same messages again are not stored twice
    assert mem.ingest(messages, session_id="s1").stored_count == 0
    # session turns are searchable, listed only when asked for
    assert mem.list() == []
    turns = mem.list(memory_type="session")
    assert {m.id for m in turns} == set(result.memory_ids)
    assert mem.search("bicycle")[0].memory.id in result.memory_ids
    assert mem.stats()["by_type"] == {"session": 2}


def test_stats(mem: Memory, home: Path) -> None:
    mem.add("alpha", category="profile", importance=1.0)
    mem.add("beta", category="events", importance=0.0)
    gone = mem.add("gamma")
    mem.delete(gone.id)
    stats = mem.stats()
    assert stats["total"] == 2
    assert stats["by_category"] == {"events": 1, "profile": 1}
    assert stats["by_state"] == {"active": 2, "deleted": 1}  # the one place deleted ones count
    assert stats["by_type"] == {"pinned": 2}
    assert stats["by_tier"] == {"peripheral": 2}
    assert stats["avg_importance"] == 0.5
    assert stats["embedding_model"] == "all-MiniLM-L6-v2-onnx-int8"
    assert Path(stats["home"]) == home


def test_export_and_import(mem: Memory, tmp_path: Path) -> None:
    a = mem.add("I moved to Berlin in 2024", tags=["city"])
    b = mem.add("I prefer dark roast coffee")
    mem.delete(b.id)
    mem.ingest([{"role": "user", "content": "hello there"}], session_id="s1")
    path = tmp_path / "export.jsonl"
    progress: list[int] = []
    assert mem.export(path, progress=progress.append) == 3
    assert sum(progress) == 3

    with Memory(tmp_path / "copy") as copy:
        assert copy.import_(path) == {
            "imported": 3,
            "skipped": 0,
            "key_conflicts": 0,
            "messages": 1,
        }
        assert copy.get(a.id).to_json() == mem.get(a.id).to_json()
        assert copy.get(b.id).state.value == "deleted"
        query = "where does the user live"
        assert [r.memory.id for r in copy.search(query, touch=False)] == [
            r.memory.id for r in mem.search(query, touch=False)
        ]
        assert a.id in [r.memory.id for r in copy.search("Berlin", touch=False)]
        assert copy.import_(str(path)) == {
            "imported": 0,
            "skipped": 3,
            "key_conflicts": 0,
            "messages": 0,
        }


def test_batch_delete_delete_all_and_reindex(mem: Memory) -> None:
    a = mem.add("alpha", category="events")
    b = mem.add("beta", category="events")
    c = mem.add("gamma", category="profile")
    assert mem.batch_delete(category=["events"]) == {"would_delete": 2}  # a dry run
    assert len(mem.list()) == 3
    assert mem.batch_delete(ids=[a.id, "unknown"]) == {"deleted": 1, "mode": "ids"}
    assert mem.batch_delete(category=["events"], confirm=True) == {"deleted": 1, "mode": "filter"}
    assert [m.id for m in mem.list()] == [c.id]
    assert mem.get(b.id).state.value == "deleted"
    assert mem.reindex() == 3
    assert mem.search("gamma")[0].memory.id == c.id
    with pytest.raises(ValidationError, match="confirmation"):
        mem.delete_all()
    assert mem.delete_all(confirm=True) == {"deleted": 1, "sessions_cleared": 0}
    assert mem.list() == []


def test_context_manager_closes_and_data_persists(home: Path) -> None:
    with Memory(home) as first:
        added = first.add("I moved to Berlin in 2024")
    assert first.service.store._connections == []  # closed on exit
    second = Memory(str(home))
    try:
        assert second.get(added.id).content == "I moved to Berlin in 2024"
        assert second.search("Berlin")[0].memory.id == added.id
    finally:
        second.close()


def test_default_home_is_memoryd_home(home: Path) -> None:
    with Memory() as mem:
        assert mem.service.home == home
        mem.add("stored in the default home")
    assert (home / "memoryd.db").is_file()


# ---------------------------------------------------------------------- configuration


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> pytest.MonkeyPatch:
    """No MEMORYD_* variable from the outside, XDG pointed into the test's tmp dir."""
    import os

    for name in list(os.environ):
        if name.startswith("MEMORYD_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    return monkeypatch


def write_config(path: Path, text: str) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    (path / CONFIG_FILENAME).write_text(text, encoding="utf-8")
    return path


def test_defaults_need_nothing(clean_env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    settings = load_settings()
    assert settings.home == tmp_path / "xdg" / "memoryd"
    assert settings.embedder == "local"
    assert settings.embed_batch_size == 8
    assert settings.embed_dimensions is None
    assert settings.rerank_provider == ""


def test_xdg_fallback_to_local_share(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.delenv("XDG_DATA_HOME")
    assert default_home() == Path.home() / ".local" / "share" / "memoryd"


def test_memoryd_home_env_wins_over_xdg(clean_env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    clean_env.setenv("MEMORYD_HOME", str(tmp_path / "mh"))
    assert default_home() == tmp_path / "mh"
    assert load_settings().home == tmp_path / "mh"


def test_config_file_in_the_home(clean_env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    home = write_config(
        tmp_path / "h",
        'embed_batch_size = 8\nrerank_provider = "jina"\nrerank_model = "jina-reranker-v2"\n',
    )
    settings = load_settings(home)
    assert settings.home == home
    assert settings.embed_batch_size == 8
    assert settings.rerank_provider == "jina"
    assert settings.rerank_model == "jina-reranker-v2"
    assert settings.embedder == "local"  # untouched keys keep their defaults


def test_env_overrides_file_and_explicit_overrides_env(
    clean_env: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    home = write_config(tmp_path / "h", 'embed_batch_size = 8\nembed_model = "from-file"\n')
    clean_env.setenv("MEMORYD_EMBED_BATCH_SIZE", "16")
    settings = load_settings(home)
    assert settings.embed_batch_size == 16
    assert settings.embed_model == "from-file"
    assert load_settings(home, embed_batch_size=4).embed_batch_size == 4


def test_env_vars_are_read(clean_env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    env = {
        "MEMORYD_EMBEDDER": "openai",
        "MEMORYD_EMBED_MODEL": "text-embedding-3-small",
        "MEMORYD_EMBED_BASE_URL": "http://localhost:8080/v1",
        "MEMORYD_EMBED_API_KEY": "sk-test",
        "MEMORYD_EMBED_DIMENSIONS": "256",
        "MEMORYD_EMBED_BATCH_SIZE": "64",
        "MEMORYD_RERANK_PROVIDER": "cohere",
        "MEMORYD_RERANK_API_KEY": "rk-test",
        "MEMORYD_RERANK_MODEL": "rerank-v3.5",
        "MEMORYD_RERANK_BASE_URL": "http://localhost:9090",
    }
    for name, value in env.items():
        clean_env.setenv(name, value)
    settings = load_settings(tmp_path / "h")
    for name, value in env.items():
        field = name.removeprefix("MEMORYD_").lower()
        assert str(getattr(settings, field)) == value, field


def test_memoryd_config_points_at_another_file(
    clean_env: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    home = write_config(tmp_path / "h", "embed_batch_size = 8\n")
    other = write_config(tmp_path / "elsewhere", "embed_batch_size = 12\n")
    clean_env.setenv("MEMORYD_CONFIG", str(other / CONFIG_FILENAME))
    assert load_settings(home).embed_batch_size == 12


def test_default_home_reads_its_config_file(clean_env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    write_config(tmp_path / "xdg" / "memoryd", "embed_batch_size = 5\n")
    assert load_settings().embed_batch_size == 5


def test_sdk_uses_the_home_config(clean_env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    home = write_config(tmp_path / "h", "embed_batch_size = 8\n")
    with Memory(home) as mem:
        assert isinstance(mem.service.settings, Settings)
        assert mem.service.settings.embed_batch_size == 8
        assert mem.service.home == home
        mem.add("configured")
        assert mem.service.embedder._batch_size == 8  # type: ignore[attr-defined]
    with Memory(home, embed_batch_size=2) as mem:
        assert mem.service.settings.embed_batch_size == 2


def test_invalid_setting_is_rejected(clean_env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    clean_env.setenv("MEMORYD_EMBEDDER", "bogus")
    with pytest.raises(MemorydValidationError, match="embedder"):
        load_settings(tmp_path / "h")
