"""The recall hooks through the real ``memoryd hook`` command: a save never hides recall,
archived memories stay out, and a prompt with nothing relevant injects nothing."""

from __future__ import annotations

import json
from pathlib import Path

from hook_helpers import clean_env, run_hook_process

from memoryd.embed.local import LocalEmbedder
from memoryd.hooks.user_prompt import SAVED_NOTE
from memoryd.sdk import Memory

SESSION = "prompt-recall"


def seeded(home: Path, embedder: LocalEmbedder) -> dict[str, str]:
    with Memory(home, embedder=embedder) as mem:
        return {
            "pnpm": mem.add("Prefers pnpm over npm for JavaScript projects").id,
            "acme": mem.add("The user is a backend engineer at Acme", category="profile").id,
            "postgres": mem.add("Migrated the billing service to Postgres 16").id,
            "vim": mem.add("Edits code in Neovim with the LazyVim setup").id,
        }


def prompt(home: Path, text: str) -> str:
    ran = run_hook_process(
        "user-prompt",
        {"hook_event_name": "UserPromptSubmit", "session_id": SESSION, "prompt": text},
        clean_env(MEMORYD_HOME=str(home)),
    )
    assert ran.code == 0, ran.err
    if not ran.out:
        return ""
    context: str = json.loads(ran.out)["hookSpecificOutput"]["additionalContext"]
    return context


def test_remember_in_a_prompt_keeps_the_recall(home: Path, embedder: LocalEmbedder) -> None:
    seeded(home, embedder)
    context = prompt(
        home,
        "Which package manager should I use for the new frontend? "
        "Also remember that my manager is called Dana.",
    )
    # the save is reported, and the recall for the question is still there
    assert SAVED_NOTE in context and "my manager is called Dana" in context
    assert "Prefers pnpm over npm for JavaScript projects" in context
    with Memory(home, embedder=embedder) as mem:
        saved = mem.search("who is my manager", limit=1)[0].memory
        assert saved.content == "Also remember that my manager is called Dana."

    # the same prompt again: one memory for the note, and the recall is still there
    again = prompt(
        home,
        "Which package manager should I use for the new frontend? "
        "Also remember that my manager is called Dana.",
    )
    assert "Prefers pnpm over npm for JavaScript projects" in again
    with Memory(home, embedder=embedder) as mem:
        assert sum("Dana" in m.content for m in mem.list(limit=100)) == 1


def session_start(home: Path) -> str:
    ran = run_hook_process(
        "session-start",
        {"hook_event_name": "SessionStart", "source": "startup", "session_id": SESSION},
        clean_env(MEMORYD_HOME=str(home)),
    )
    assert ran.code == 0, ran.err
    context: str = json.loads(ran.out)["hookSpecificOutput"]["additionalContext"]
    return context


def test_archived_memories_are_not_recalled(home: Path, embedder: LocalEmbedder) -> None:
    ids = seeded(home, embedder)
    assert "pnpm" in prompt(home, "Which package manager do I use for JavaScript?")
    assert "pnpm" in session_start(home)
    with Memory(home, embedder=embedder) as mem:
        mem.update(ids["pnpm"], state="archived")
    assert "pnpm" not in prompt(home, "Which package manager do I use for JavaScript?")
    started = session_start(home)
    assert "pnpm" not in started and "Neovim" in started


def test_nothing_relevant_injects_nothing(home: Path, embedder: LocalEmbedder) -> None:
    seeded(home, embedder)
    with Memory(home, embedder=embedder) as mem:
        hits = mem.search("xylophone zebra quantum marmalade")
        # relative scores always crown a best hit; the absolute similarity says it is noise
        assert hits and hits[0].score == 1.0
        assert all(h.similarity is not None and h.similarity < 0.15 for h in hits)
    assert prompt(home, "xylophone zebra quantum marmalade") == ""
    assert "Neovim" in prompt(home, "How is my code editor set up?")
