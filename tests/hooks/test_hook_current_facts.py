"""A changed fact, through the Claude Code prompt hook run as Claude Code runs it.

After "I live in Berlin" and, later, "I moved to Porto", the context the
hook injects states the current fact; the raw turn that said Berlin is
retired with the fact it said and is not injected at all.
"""

from __future__ import annotations

from pathlib import Path

from hook_helpers import clean_env, run_hook_process

from memoryd.embed.local import LocalEmbedder
from memoryd.sdk import Memory

BEFORE = [("user", "I live in Berlin and work as a nurse."), ("assistant", "Berlin is lovely!")]
AFTER = [("user", "Big news: I moved to Porto last month."), ("assistant", "Big change!")]


def test_the_prompt_hook_injects_the_current_fact_first(
    tmp_path: Path, embedder: LocalEmbedder
) -> None:
    home = tmp_path / "home"
    env = clean_env(MEMORYD_HOME=str(home))
    with Memory(home, embedder=embedder) as memory:
        for number, session in enumerate((BEFORE, AFTER)):
            result = memory.ingest(
                [{"role": r, "content": c} for r, c in session],
                session_id=f"chat-{number}",
                mode="smart",
            )
            memory.wait_for_task(result.task_id)
    prompt = {
        "hook_event_name": "UserPromptSubmit",
        "session_id": "another",
        "prompt": "Where does the user live these days?",
    }
    ran = run_hook_process("user-prompt", prompt, env)
    assert ran.code == 0, ran.err
    context = ran.json()["hookSpecificOutput"]["additionalContext"]
    assert "Porto" in context
    assert "The user moved to Porto" in context, context
    assert "Berlin" not in context, context
