"""A scripted twenty-turn agent conversation, run through any ``MemoryManager``.

The same loop runs on every provider: the acceptance is that memory behaves
the same whichever store is behind the manager.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from memoryd.agents import MemoryManager

PREFERENCE = "I prefer dark roast coffee, never light roast."
PREFERENCE_WORDS = "dark roast"
COFFEE_QUESTION = "Which coffee beans should I order for the office?"
# said only in a message that reaches memory through on_pre_compact
COMPACTED = "My sister Lena lives in Lisbon and visits every August."
SISTER_QUESTION = "When does my sister come to visit?"
LAST_FACT = "I work as a data engineer at Acme Corp."

TURNS: list[tuple[str, str]] = [
    ("Hi! Can you help me plan my week?", "Of course. What is on your plate?"),
    (PREFERENCE, "Noted: dark roast, never light."),
    ("Monday I have a dentist appointment at nine.", "I will block Monday morning."),
    ("What is a good way to structure a design review?", "Start with goals, then risks."),
    ("Thanks, that helps.", "Glad it helps."),
    ("Can you summarise the review notes in three bullets?", "Goals, risks, owners."),
    ("How long should a retro take?", "About an hour for a two-week sprint."),
    ("Remind me what day it is.", "It is Tuesday."),
    ("Let's draft an agenda for Thursday.", "Intro, status, blockers, next steps."),
    ("Add a slot for the budget.", "Added budget after status."),
    ("What should I bring to the offsite?", "A laptop and the roadmap."),
    ("Ok.", "Anything else?"),
    ("Which meeting room is free at two?", "Room B is free."),
    ("Book it.", "Booked Room B at two."),
    ("How do I export the calendar?", "Use the export button in settings."),
    ("Great.", "Happy to help."),
    ("What did we decide about the agenda?", "Budget goes after status."),
    ("Let's wrap up the week plan.", "Here is the week plan."),
    ("One more thing about snacks for the team.", "Fruit and nuts work well."),
    (COFFEE_QUESTION, "Let me check what you like."),
]


@dataclass
class LoopResult:
    blocks: list[str] = field(default_factory=list)  # prefetch before each turn
    messages: list[dict[str, str]] = field(default_factory=list)


def run_loop(manager: MemoryManager, session_id: str | None = None) -> LoopResult:
    """Twenty turns: prefetch before, capture after, the next turn's recall warmed."""
    result = LoopResult()
    for i, (user, assistant) in enumerate(TURNS):
        result.blocks.append(manager.prefetch(user, session_id))
        result.messages += [
            {"role": "user", "content": user},
            {"role": "assistant", "content": assistant},
        ]
        manager.on_turn_complete(user, assistant, session_id)
        if i + 1 < len(TURNS):
            manager.queue_prefetch(TURNS[i + 1][0], session_id)
        if i == 1:  # the preference's extraction is done before the later turns recall it
            assert manager.provider is not None
            manager.provider.flush()
    return result


def check_loop(
    make: Callable[..., MemoryManager], profile: str | None = None, background: bool = True
) -> None:
    """The whole acceptance on one provider: recall across turns, sessions, compaction,
    shutdown."""
    manager = make(profile)
    result = run_loop(manager)
    # the preference stated at turn 2 is recalled at turn 20, in the same session
    assert PREFERENCE_WORDS in result.blocks[19], result.blocks[19]
    # compaction: a message never passed to on_turn_complete is kept, nothing is sent twice
    before_compaction = [
        *result.messages[:10],
        {"role": "user", "content": COMPACTED},
        {"role": "assistant", "content": "Lovely, August in Lisbon."},
    ]
    assert manager.on_pre_compact(before_compaction) == 2
    session = manager.session_id
    manager.on_session_end([*result.messages, *before_compaction[10:]])
    assert manager.session_id != session  # the next turns are a new session
    # a new session of the same manager recalls both
    assert PREFERENCE_WORDS in (block := manager.prefetch(COFFEE_QUESTION)), block
    assert "Lisbon" in (block := manager.prefetch(SISTER_QUESTION)), block
    # shutdown flushes extraction still pending (a provider that extracts in the background)
    manager.on_turn_complete(LAST_FACT, "Noted.")
    assert manager.provider is not None
    pending = list(getattr(manager.provider, "_pending", []))
    assert pending or not background, "the last turn queued an extraction"
    manager.shutdown()
    again = make(profile)
    assert again.provider is not None
    for task_id in pending:
        assert again.provider.memory.task(task_id)["status"] == "completed"  # type: ignore[attr-defined]
    distilled = [h for h in again.search("Where is the user employed?", 10) if not h.turn]
    assert any("Acme" in h.content for h in distilled), distilled
    # and a fresh manager, in a new session, recalls the preference
    assert PREFERENCE_WORDS in again.prefetch(COFFEE_QUESTION)
