"""After fusion: a question about a named person ranks what that person said first.

A conversation turn is a transcript line, ``speaker: text``. When the query
names a speaker ("What does Melanie do to destress?"), the turns that speaker
said are first-person statements about them ("I've been running farther to
de-stress"), while the other speakers' turns that mention the name are mostly
replies to them ("That's awesome, Melanie!"). Keyword and vector legs both see
the name in either and cannot tell them apart; this stage can.

Each turn said by a speaker whom the query names is multiplied by
``config.speaker_boost``. Generic roles (user, assistant, …) are no names: a
query that says "the user" boosts nothing. A speaker is named when the query
holds their name as a word, case-insensitively, also as a possessive
("Melanie's"). A query that names nobody among the candidates' speakers
changes nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from memoryd.models import Memory, MemoryType
from memoryd.retrieve.candidate import Candidate
from memoryd.retrieve.config import SearchConfig
from memoryd.text.conversation import GENERIC_ROLES

_WORD = re.compile(r"\w+")
# a speaker name longer than this is no name (a role like "tool output of search_web")
MAX_NAME_WORDS = 3


def speaker_of(memory: Memory) -> str | None:
    """The named speaker of a conversation turn, lower-cased; None for other memories."""
    if memory.memory_type is not MemoryType.SESSION:
        return None
    role, sep, _ = memory.content.partition(": ")
    role = role.strip().casefold()
    if not sep or not role or role in GENERIC_ROLES:
        return None
    if len(role.split()) > MAX_NAME_WORDS:
        return None
    return role


def named_speakers(query: str, speakers: Iterable[str]) -> set[str]:
    """The speakers whose whole name occurs in the query as words."""
    words = _WORD.findall(query.casefold())
    text = f" {' '.join(words)} "
    found = set()
    for name in set(speakers):
        name_words = _WORD.findall(name)
        if name_words and f" {' '.join(name_words)} " in text:
            found.add(name)
    return found


def speaker_match(candidates: list[Candidate], query: str, config: SearchConfig) -> list[Candidate]:
    if config.speaker_boost == 1.0 or not candidates:
        return candidates
    speakers = {c.rowid: speaker_of(c.mem) for c in candidates}
    named = named_speakers(query, (s for s in speakers.values() if s))
    if not named:
        return candidates
    for c in candidates:
        if speakers[c.rowid] in named:
            c.score *= config.speaker_boost
    return candidates
