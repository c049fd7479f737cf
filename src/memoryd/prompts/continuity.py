"""The checkpoint summary prompt: where a session stands, for whoever picks it up next.

The model sees the session's mechanical checkpoint (its first request, the
recent conversation, the recent tool calls with their outcomes, the files
written) and the previous summary, and answers four short fields. What it
writes is shown to the next session as data inside memoryd's fenced block,
never as instructions.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

CHECKPOINT_SYSTEM = """\
You keep a work log for an AI coding agent whose session may be reset at any moment. \
From the SESSION below (its first request, the recent conversation, recent tool calls \
with their outcome, files it modified, and the previous summary if any) write where the \
work stands so the next session can continue without asking the user again:
- goal: what the user wants done, in one sentence;
- progress: what is done so far, in one or two sentences;
- next_step: the very next concrete action;
- key_findings: at most 5 short facts learned that the next session needs (causes of \
failures, decisions, constraints the user stated).
Use only what the SESSION says. Quote file names exactly. Write null for a field the \
session does not tell.
Answer with JSON only, no prose, no code fence:
{"goal": "…", "progress": "…", "next_step": "…", "key_findings": ["…"]}"""


class CheckpointAnswer(BaseModel):
    """The model's summary of a session."""

    model_config = ConfigDict(extra="ignore")

    goal: str | None = None
    progress: str | None = None
    next_step: str | None = None
    key_findings: list[str] = Field(default_factory=list, max_length=10)


LAYER_SYSTEM = """\
You condense the record of one AI agent session into a shorter layer of its memory. \
You get the SOURCE (a longer layer of the same session) and the FORM to write:
- outline: a structured outline of at most about 500 tokens: the goal, the main steps \
in order, decisions, problems and how they were solved, the outcome;
- gist: one or two sentences of at most about 200 tokens saying what the session was \
about and how it ended, worded so a search for the topic finds it;
- themes: 3 to 8 short topic tags, comma-separated, at most about 50 tokens.
Use only what the SOURCE says; keep names, files and numbers exact.
Answer with JSON only, no prose, no code fence: {"text": "…"}"""


class LayerAnswer(BaseModel):
    """One condensed layer."""

    model_config = ConfigDict(extra="ignore")

    text: str = Field(min_length=1)
