"""Prompt texts and the pydantic schemas their answers must match.

Kept apart from the code that calls the LLM so a prompt can be read,
reviewed and changed as text, and so each prompt sits next to the schema
that validates what it asks for: the two change together.
"""

from memoryd.prompts.documents import (
    CHUNK_FACTS_SYSTEM,
    DOCUMENT_SYSTEM,
    SECTION_SYSTEM,
    SummaryAnswer,
)
from memoryd.prompts.extraction import (
    EXTRACTION_SYSTEM,
    MAX_EXTRACTED_FACTS,
    ExtractedFactAnswer,
    ExtractionAnswer,
)
from memoryd.prompts.reconcile import (
    RECONCILE_SYSTEM,
    DecisionAnswer,
    ReconcileAnswer,
)
from memoryd.prompts.reflect import REFLECT_SYSTEM, ReflectAnswer

__all__ = [
    "CHUNK_FACTS_SYSTEM",
    "DOCUMENT_SYSTEM",
    "EXTRACTION_SYSTEM",
    "MAX_EXTRACTED_FACTS",
    "RECONCILE_SYSTEM",
    "REFLECT_SYSTEM",
    "SECTION_SYSTEM",
    "DecisionAnswer",
    "ExtractedFactAnswer",
    "ExtractionAnswer",
    "ReconcileAnswer",
    "ReflectAnswer",
    "SummaryAnswer",
]
