"""The context engine's constants (seed 003), and the optimisation mode that tightens them.

The numbers are those the seed tuned on its benchmarks; ``optimization``
switches every budget the seed names at once: leaf and condensed summary
targets shrink, recall layer L1 halves, L2 is dropped, L3 keeps 3 hits.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

# compaction
CONTEXT_THRESHOLD = 0.75  # compact when the context passes this share of the budget
FRESH_TAIL_COUNT = 4  # the newest messages, always verbatim
LEAF_CHUNK_TOKENS = 4000  # the most source one leaf summary covers
LEAF_TARGET_TOKENS = 1500
LEAF_TARGET_TOKENS_OPT = 1000
CONDENSED_TARGET_TOKENS = 2000
CONDENSED_TARGET_TOKENS_OPT = 1200
LEAF_MIN_FANOUT = 3  # leaves (or condensed summaries) before a condensed roll-up
# a leaf is at most this share of its source: a summary as long as what it covers saves nothing
LEAF_RATIO = 0.4

# recall (seed 003 "Retrieval Pipeline")
L1_TOKENS = 800
L1_TOKENS_OPT = 400
L2_TOKENS = 500
L3_HITS = 10
L3_HITS_OPT = 3
# the conversation's own compacted messages that best match the query, shown verbatim in L3:
# as deep as the search (bench context on LoCoMo dev: 5 gave 0.724, 10 gave 0.742 on the
# first two conversations)
L3_CONVERSATION_HITS = L3_HITS
L3_CONVERSATION_HITS_OPT = L3_HITS_OPT
QUERY_MESSAGES = 3  # the query is the last three messages
# recall takes at most this share of what the budget leaves after the hint and the fresh tail
RECALL_SHARE = 0.5
# a memory this important (or pinned) is "essential" (L1)
ESSENTIAL_IMPORTANCE = 0.8

# large parts: over this many characters a part is stored once and replaced by a pointer line
LARGE_PART_CHARS = 16_000
# the most messages one batch ingest or bootstrap may carry
MAX_BATCH_MESSAGES = 10_000
MAX_BUDGET_TOKENS = 10_000_000


@dataclass(frozen=True)
class ContextConfig:
    """Every tunable of the engine; the defaults are the seed's."""

    context_threshold: float = CONTEXT_THRESHOLD
    fresh_tail_count: int = FRESH_TAIL_COUNT
    leaf_chunk_tokens: int = LEAF_CHUNK_TOKENS
    leaf_target_tokens: int = LEAF_TARGET_TOKENS
    condensed_target_tokens: int = CONDENSED_TARGET_TOKENS
    leaf_min_fanout: int = LEAF_MIN_FANOUT
    l1_tokens: int = L1_TOKENS
    l2_tokens: int | None = L2_TOKENS  # None: L2 is dropped
    l3_hits: int = L3_HITS
    l3_conversation_hits: int = L3_CONVERSATION_HITS
    large_part_chars: int = LARGE_PART_CHARS
    # captured turns are also long-term memories (searchable next week, recalled by L3)
    remember_turns: bool = True
    # summaries go through smart ingest, so decided facts become long-term memories
    remember_summaries: bool = True
    # summaries carry a ``[Date: …]`` line where the day of their messages changes
    date_headers: bool = True
    identity: str = ""
    identity_files: tuple[str, ...] = field(default_factory=tuple)

    @classmethod
    def optimized(cls, **overrides: object) -> ContextConfig:
        """The seed's ``contextOptimization=true`` budgets."""
        return replace(
            cls(),
            leaf_target_tokens=LEAF_TARGET_TOKENS_OPT,
            condensed_target_tokens=CONDENSED_TARGET_TOKENS_OPT,
            l1_tokens=L1_TOKENS_OPT,
            l2_tokens=None,
            l3_hits=L3_HITS_OPT,
            l3_conversation_hits=L3_CONVERSATION_HITS_OPT,
            **overrides,  # type: ignore[arg-type]
        )
