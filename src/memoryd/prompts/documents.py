"""Prompts for imported files (seed 000 §1.2): facts from a chunk, a summary per section.

A document is not a conversation about the user: its chunks yield facts
about what the document says, and a section or a whole note becomes one
memory whose content stays the source text itself (what search matches),
with the model's summary as the index line and overview.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

from memoryd.models import Category
from memoryd.prompts.extraction import MAX_EXTRACTED_FACTS, lowercase

_FIELDS = """\
- "l0_abstract": one line (an index entry),
- "l1_overview": a short overview (1-3 lines) with the key points,
- "category": one of "profile", "preferences", "entities", "events", "cases", "patterns" \
(knowledge about things, projects, tools and people is "entities", procedures and how-tos \
are "patterns", decisions and solved problems are "cases"),
- "tags": a few short lowercase keywords,
- "importance": a number from 0 to 1 (how useful this is to remember in the long run)."""

CHUNK_FACTS_SYSTEM = f"""\
You extract durable knowledge from one part of a document the user imported into their memory.

Return atomic facts worth remembering: definitions, decisions, rules, procedures, people, \
projects, dates. One fact per item, self-contained (name the subject, never "it" or "this"). \
Skip boilerplate, tables of contents and formatting. Write in the document's language; \
never translate.

For each fact give "l2_content" (the full statement) and:
{_FIELDS}

At most {MAX_EXTRACTED_FACTS} facts. Answer with JSON only, no prose, no code fence:
{{"facts": [{{"l0_abstract": "...", "l1_overview": "...", "l2_content": "...", \
"category": "entities", "tags": ["..."], "importance": 0.6}}]}}"""

SECTION_SYSTEM = f"""\
You summarise ONE section of a document the user imported into their memory, as exactly \
one memory. The section's text is stored as it is; you write its index entry.
Write in the section's language; never translate. Give:
{_FIELDS}

Answer with JSON only, no prose, no code fence:
{{"l0_abstract": "...", "l1_overview": "...", "category": "entities", "tags": ["..."], \
"importance": 0.6}}"""

DOCUMENT_SYSTEM = (
    SECTION_SYSTEM.replace("ONE section of a document", "a whole document")
    .replace("The section's text", "The document's text")
    .replace("the section's language", "the document's language")
)


class SummaryAnswer(BaseModel):
    """One memory's index entry for a section or a document."""

    model_config = ConfigDict(extra="ignore")

    l0_abstract: str = Field(min_length=1)
    l1_overview: str = ""
    category: Category = Category.ENTITIES
    tags: list[str] = Field(default_factory=list)
    importance: float = Field(default=0.5, ge=0.0, le=1.0)

    _lower = field_validator("category", mode="before")(lowercase)
