"""The mem0 provider: mem0's own Memory, on this machine, with the scripted LLM extracting."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator

import pytest
from agent_loop import COFFEE_QUESTION, PREFERENCE, PREFERENCE_WORDS, check_loop
from scripted_llm import Recorded, ScriptedLLM

from memoryd.agents import MemoryManager

Make = Callable[..., MemoryManager]
FIRST_PERSON = re.compile(r"^(I|I'm|My)\b")


def extractor(request: Recorded) -> str:
    """mem0's extraction, scripted: each first-person statement of the user's, as a memory."""
    prompt = request.messages[-1]["content"]
    said = prompt.split("## New Messages", 1)[-1].split("\n## ", 1)[0]
    facts = [
        line.removeprefix("user: ").strip()
        for line in said.splitlines()
        if line.startswith("user: ")
    ]
    kept = [f for f in facts if FIRST_PERSON.match(f) and not f.endswith("?")]
    return json.dumps({"memory": [{"id": str(i), "text": f} for i, f in enumerate(kept)]})


@pytest.fixture
def mem0_llm() -> Iterator[ScriptedLLM]:
    with ScriptedLLM(extractor) as server:
        yield server


def options(llm: ScriptedLLM) -> dict[str, object]:
    config = {"model": "scripted", "api_key": "test", "openai_base_url": llm.url}
    return {"llm": {"provider": "openai", "config": config}}


def test_the_same_loop_runs_on_mem0(managers: Make, mem0_llm: ScriptedLLM) -> None:
    def make(profile: str | None = None) -> MemoryManager:
        return managers(profile, provider="mem0", options=options(mem0_llm))

    check_loop(make, "mem0-profile", background=False)
    assert mem0_llm.chat_requests  # mem0 extracted through the LLM
    assert "## New Messages" in mem0_llm.chat_requests[0].messages[-1]["content"]


def test_mem0_profiles_never_see_each_other(managers: Make, mem0_llm: ScriptedLLM) -> None:
    work = managers("work", provider="mem0", options=options(mem0_llm))
    home = managers("home", provider="mem0", options=options(mem0_llm))
    home.on_turn_complete(PREFERENCE, "Noted.")
    assert PREFERENCE_WORDS in home.prefetch(COFFEE_QUESTION)
    assert work.prefetch(COFFEE_QUESTION) == ""


def test_mem0_without_an_llm_keeps_the_turns(managers: Make) -> None:
    manager = managers(provider="mem0")
    manager.on_turn_complete(PREFERENCE, "Noted.", session_id="earlier")
    hits = manager.search(COFFEE_QUESTION, 5)
    assert PREFERENCE in [h.content for h in hits] and all(h.turn for h in hits)
    # the memory tool never finds the conversation in progress: the question is not its hit
    manager.on_turn_complete(COFFEE_QUESTION, "Let me look.")
    found = manager.search(COFFEE_QUESTION, 5)
    assert all(h.session_id != manager.session_id for h in found), found
    assert PREFERENCE_WORDS in manager.prefetch(COFFEE_QUESTION, session_id="another")
    remembered = manager.remember("The user's dog is Biscuit.")
    assert manager.search("dog name", 3)[0].id == remembered.id
    manager.forget(remembered.id)
    assert remembered.id not in [h.id for h in manager.search("dog name", 3)]
