"""MemoryManager on the local provider: the lifecycle, profiles, settings, failures."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from agent_loop import COFFEE_QUESTION, PREFERENCE, PREFERENCE_WORDS, check_loop

from memoryd.agents import (
    AsyncMemoryManager,
    MemoryHit,
    MemoryManager,
    ProviderContext,
    UndeliveredError,
    register_provider,
    unregister_provider,
)
from memoryd.agents.providers.local import LocalProvider
from memoryd.embed.local import LocalEmbedder
from memoryd.errors import ValidationError
from memoryd.inject import FENCE_OPEN

Make = Callable[..., MemoryManager]


def test_twenty_turn_loop_on_the_local_provider(managers: Make) -> None:
    check_loop(managers)


def test_default_manager_uses_the_local_provider_on_memoryd_home(
    home: Path, embedder: LocalEmbedder
) -> None:
    with MemoryManager(embedder=embedder) as manager:  # MEMORYD_HOME is the test's home
        assert manager.settings.provider == "local"
        assert manager.home == home
        manager.remember(PREFERENCE)
    assert (home / "memoryd.db").exists() or any(home.iterdir())


def test_profiles_have_their_own_homes_and_never_see_each_other(managers: Make) -> None:
    work, personal = managers("work"), managers("personal")
    assert work.home.parent == personal.home.parent
    assert work.home.parent.name == "profiles"
    work.remember("The quarterly report is due on Friday.")
    personal.remember(PREFERENCE)
    work.on_turn_complete("Our team standup moved to 10am.", "Noted.")
    work.shutdown()
    assert all("report" not in h.content for h in personal.search("quarterly report due", 10))
    assert all("standup" not in h.content for h in personal.search("team standup time", 10))
    assert PREFERENCE_WORDS not in (managers("work").prefetch(COFFEE_QUESTION))
    assert PREFERENCE_WORDS in personal.prefetch(COFFEE_QUESTION)


@pytest.mark.parametrize("name", ["../escape", "a/b", "", ".hidden", "x" * 80])
def test_a_profile_name_that_is_not_a_folder_name_is_refused(managers: Make, name: str) -> None:
    with pytest.raises(ValidationError, match="invalid profile name"):
        managers(name)


def test_prefetch_stays_within_max_prompt_chars_and_top_k(managers: Make) -> None:
    manager = managers()
    for i in range(12):
        manager.remember(f"Coffee note {i}: the user likes a dark roast from roaster number {i}.")
    block = manager.prefetch("which dark roast coffee does the user like")
    assert block.startswith(FENCE_OPEN)
    assert sum(line.startswith("- ") for line in block.splitlines()) == 5  # top 5
    small = managers(max_prompt_chars=450)
    capped = small.prefetch("which dark roast coffee does the user like")
    assert 0 < len(capped) <= 450


def test_settings_come_from_the_profile_settings_json(managers: Make, home: Path) -> None:
    profile = home / "profiles" / "quiet"
    profile.mkdir(parents=True)
    (profile / "settings.json").write_text(
        json.dumps({"memory": {"prefetch": False, "max_prompt_chars": 1234}})
    )
    manager = managers("quiet")
    assert manager.settings.max_prompt_chars == 1234
    manager.remember(PREFERENCE)
    assert manager.prefetch(COFFEE_QUESTION) == ""  # prefetch is off for this profile
    assert managers("quiet", prefetch=True).settings.prefetch is True  # code overrides file


def test_bad_settings_are_a_clear_error(managers: Make, home: Path) -> None:
    with pytest.raises(ValidationError, match="max_prompt_chars"):
        managers(max_prompt_chars=0)
    with pytest.raises(ValidationError, match="sync_turn"):
        managers(sync_turn=True)  # a typo of sync_turns
    home.mkdir(parents=True, exist_ok=True)
    (home / "settings.json").write_text("{not json")
    with pytest.raises(ValidationError, match=r"settings\.json"):
        managers()


@pytest.mark.parametrize("off", [{"enabled": False}, {"provider": None}])
def test_disabled_memory_does_nothing(managers: Make, off: dict[str, object]) -> None:
    manager = managers(**off)
    assert manager.provider is None
    manager.on_turn_complete(PREFERENCE, "Noted.")
    assert manager.prefetch(COFFEE_QUESTION) == ""
    assert manager.on_pre_compact([{"role": "user", "content": PREFERENCE}]) == 0
    with pytest.raises(Exception, match="memory is disabled"):
        manager.search(COFFEE_QUESTION)


def test_no_sync_turns_keeps_turns_for_compaction_and_session_end(managers: Make) -> None:
    manager = managers(sync_turns=False)
    manager.on_turn_complete(PREFERENCE, "Noted.")
    assert manager.search("dark roast coffee", 5) == []  # nothing captured per turn
    turns = [{"role": "user", "content": PREFERENCE}, {"role": "assistant", "content": "Ok."}]
    manager.on_session_end(turns)
    assert PREFERENCE_WORDS in manager.prefetch(COFFEE_QUESTION)


def test_the_current_sessions_own_turns_are_not_prefetched(managers: Make) -> None:
    manager = managers()
    manager.on_turn_complete("My favourite editor is Helix.", "Nice choice.")
    assert manager.provider is not None
    manager.provider.flush()
    own = manager.prefetch("which editor do I use")
    assert "user: My favourite editor" not in own  # the context has it already
    other = manager.prefetch("which editor do I use", session_id="another-session")
    assert "user: My favourite editor is Helix." in other


class CountingProvider(LocalProvider):
    """The local provider, counting its searches."""

    name = "counting"

    def __init__(self, context: ProviderContext) -> None:
        super().__init__(context)
        self.searches = 0

    def search(self, query: str, *, limit: int) -> list[MemoryHit]:
        self.searches += 1
        return super().search(query, limit=limit)


def test_queue_prefetch_warms_the_next_prefetch(managers: Make) -> None:
    register_provider("counting", CountingProvider)
    try:
        manager = managers(provider="counting")
        manager.remember(PREFERENCE)
        provider = manager.provider
        assert isinstance(provider, CountingProvider)
        manager.queue_prefetch(COFFEE_QUESTION)
        manager.queue_prefetch(COFFEE_QUESTION)  # once is enough
        warmed = manager.prefetch(COFFEE_QUESTION)
        assert provider.searches == 1
        assert PREFERENCE_WORDS in warmed
        assert manager.prefetch(COFFEE_QUESTION) == warmed  # not warmed: searched again
        assert provider.searches == 2
    finally:
        unregister_provider("counting")


class FlakyProvider(LocalProvider):
    """The local provider with a store that is down until ``up`` is set."""

    name = "flaky"

    def __init__(self, context: ProviderContext) -> None:
        super().__init__(context)
        self.up = False

    def _check(self) -> None:
        if not self.up:
            raise ConnectionError("store unreachable")

    def search(self, query: str, *, limit: int) -> list[MemoryHit]:
        self._check()
        return super().search(query, limit=limit)

    def capture(self, messages: Sequence[dict[str, str]], *, session_id: str) -> None:
        self._check()
        super().capture(messages, session_id=session_id)


def test_a_failing_provider_never_breaks_the_turn_and_loses_nothing(
    managers: Make, caplog: pytest.LogCaptureFixture
) -> None:
    register_provider("flaky", FlakyProvider)
    try:
        manager = managers(provider="flaky")
        provider = manager.provider
        assert isinstance(provider, FlakyProvider)
        with caplog.at_level(logging.WARNING, logger="memoryd.agents"):
            assert manager.prefetch(COFFEE_QUESTION) == ""
            manager.on_turn_complete(PREFERENCE, "Noted.")  # does not raise
        assert "prefetch from provider 'flaky' failed" in caplog.text
        assert "store unreachable" in caplog.text
        assert "kept to retry" in caplog.text
        provider.up = True
        manager.on_turn_complete("Thanks!", "Any time.")  # delivers the kept turn too
        manager.on_session_end()
        assert PREFERENCE_WORDS in manager.prefetch(COFFEE_QUESTION, session_id="next")
    finally:
        unregister_provider("flaky")


def test_shutdown_hands_back_what_could_not_be_stored(managers: Make) -> None:
    register_provider("flaky", FlakyProvider)
    try:
        manager = managers(provider="flaky")
        manager.on_turn_complete(PREFERENCE, "Noted.")
        with pytest.raises(UndeliveredError) as raised:
            manager.shutdown()
        assert [m["content"] for m in raised.value.messages] == [PREFERENCE, "Noted."]
    finally:
        unregister_provider("flaky")


def test_on_memory_write_mirrors_add_replace_and_remove(managers: Make) -> None:
    manager = managers()
    added = manager.on_memory_write("add", "user", "The user's team uses Linear for tickets.")
    assert added is not None
    replaced = manager.on_memory_write(
        "replace",
        "user",
        "The user's team uses Jira for tickets.",
        old_content="The user's team uses Linear for tickets.",
    )
    assert replaced is not None
    history = manager.history(added.id)
    assert any(row.get("action") == "update" for row in history), history
    found = [h.content for h in manager.search("which ticket tracker does the team use", 5)]
    assert "The user's team uses Jira for tickets." in found
    assert "The user's team uses Linear for tickets." not in found
    removed = manager.on_memory_write("remove", "user", "The user's team uses Jira for tickets.")
    assert removed is not None and removed.id == replaced.id
    assert all("Jira" not in h.content for h in manager.search("ticket tracker", 5))
    with pytest.raises(ValidationError, match="unknown memory write action"):
        manager.on_memory_write("append", "user", "x")


def test_the_async_manager_runs_the_same_lifecycle(home: Path, embedder: LocalEmbedder) -> None:
    async def loop() -> str:
        async with AsyncMemoryManager(home=home, embedder=embedder) as memory:
            assert await memory.prefetch(COFFEE_QUESTION) == ""
            await memory.on_turn_complete(PREFERENCE, "Noted.")
            await memory.on_session_end()
            await memory.queue_prefetch(COFFEE_QUESTION)
            block = await memory.prefetch(COFFEE_QUESTION)
            reflection = await memory.reflect("what coffee does the user like")
            assert reflection.citations
            return block

    assert PREFERENCE_WORDS in asyncio.run(loop())


def test_consolidation_through_the_manager(managers: Make) -> None:
    manager = managers()
    first = manager.remember("The user lives in Berlin.")
    manager.remember("The user's favourite colour is green.")
    task = manager.consolidate()
    assert task["status"] == "completed" and task["kind"] == "consolidate"
    assert task["memories_checked"] == 2
    assert manager.history(first.id)[0]["action"] == "create"
