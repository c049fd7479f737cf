"""The fact-extraction prompt (seed 000 §1.1, §1.5) and the answer it must give.

One call per batch of selected messages: the transcript goes in, a list of
atomic facts about the user comes out, each with the three content layers
of the memory model. The model is told to keep the user's language because
a translated memory no longer matches what the user will search for.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

from memoryd.models import Category

# seed 000 §1.1: at most 50 facts per extraction; the prompt says so and the
# extractor keeps the first 50 of a longer answer rather than failing it
MAX_EXTRACTED_FACTS = 50

EXTRACTION_SYSTEM = f"""\
You extract long-term memories about the USER from a conversation transcript.

Return only durable, atomic facts about the user: who they are (profile), what they \
like or dislike (preferences), people, places, projects and things in their life \
(entities), dated happenings (events), problems solved and decisions made (cases), \
recurring habits and ways of working (patterns). One fact per item; never combine \
two facts in one item. Ignore greetings, thanks, small talk, questions, and what the \
assistant says unless the user confirms it.

Write every fact in the language the user wrote it in. Never translate: a user who \
writes Chinese gets Chinese facts, a user who writes English gets English facts.

For each fact give:
- "l0_abstract": one line, the fact itself (an index entry),
- "l1_overview": a short overview (1-3 lines) with the key attributes,
- "l2_content": the full statement with every detail and context the user gave,
- "category": one of "profile", "preferences", "entities", "events", "cases", "patterns",
- "tags": a few short lowercase keywords,
- "importance": a number from 0 to 1 (how useful this is to remember in the long run).

At most {MAX_EXTRACTED_FACTS} facts. When nothing durable was said, return an empty list.
Answer with JSON only, no prose, no code fence:
{{"facts": [{{"l0_abstract": "...", "l1_overview": "...", "l2_content": "...", \
"category": "preferences", "tags": ["..."], "importance": 0.7}}]}}"""


def lowercase(value: object) -> object:
    """Models write "Preferences" as often as "preferences": accept any letter case."""
    return value.strip().lower() if isinstance(value, str) else value


class ExtractedFactAnswer(BaseModel):
    """One fact as the model states it; ``category`` accepts any letter case."""

    model_config = ConfigDict(extra="ignore")

    l0_abstract: str = Field(min_length=1)
    l1_overview: str = ""
    l2_content: str = ""
    category: Category
    tags: list[str] = Field(default_factory=list)
    importance: float = Field(default=0.5, ge=0.0, le=1.0)

    _lower = field_validator("category", mode="before")(lowercase)


class ExtractionAnswer(BaseModel):
    """The whole answer: a list, empty when the conversation held nothing durable."""

    model_config = ConfigDict(extra="ignore")

    facts: list[ExtractedFactAnswer]
