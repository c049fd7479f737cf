"""What a hook reads from its environment: which store, how long it may take, how much it injects.

Claude Code passes the hook the environment of the session (and the ``env``
of ``~/.claude/settings.json``), so every knob is an environment variable.
The ourmem names (``OMEM_API_URL``, ``OMEM_API_KEY``) are honoured too, so one
setting serves the ourmem plugins and these hooks alike. A malformed value
falls back to its default and is logged: a typo must not silence memory.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from memoryd.home import default_home
from memoryd.inject import DEFAULT_BUDGET_TOKENS, RECALL_MIN_SIMILARITY
from memoryd.store.scopes import is_part

ENV_URL = ("MEMORYD_URL", "OMEM_API_URL")
ENV_KEY = ("MEMORYD_API_KEY", "OMEM_API_KEY")
ENV_HTTP_TIMEOUT = "MEMORYD_HOOK_HTTP_TIMEOUT"
ENV_INGEST_WAIT = "MEMORYD_HOOK_INGEST_WAIT"
ENV_SESSION_TOKENS = "MEMORYD_HOOK_SESSION_TOKENS"
ENV_PROMPT_TOKENS = "MEMORYD_HOOK_PROMPT_TOKENS"
ENV_MIN_SIMILARITY = "MEMORYD_HOOK_MIN_SIMILARITY"
ENV_AGENT_ID = "MEMORYD_AGENT_ID"
# the agent whose checkpoints the Claude Code hooks save and restore
DEFAULT_AGENT_ID = "claude-code"

# a server that does not answer within this is treated as down (ourmem's hooks use 8 s)
DEFAULT_HTTP_TIMEOUT_S = 5.0
# how long Stop/PreCompact wait for the smart-ingest task of the embedded store before
# handing it to a background process: rules alone finish well within it, an LLM may not
DEFAULT_INGEST_WAIT_S = 2.0
DEFAULT_SESSION_TOKENS = DEFAULT_BUDGET_TOKENS
# a prompt's recall rides on every turn, so it gets less than the session start
DEFAULT_PROMPT_TOKENS = 600
MAX_TOKENS = 20_000
# a prompt's recall injects only memories at least this similar to it (cosine, bundled
# model): below, a hit is the best of nothing relevant, however high its relative score
DEFAULT_MIN_SIMILARITY = RECALL_MIN_SIMILARITY

LOG_DIR = "logs"
LOG_FILE = "hooks.log"


@dataclass(frozen=True)
class HookConfig:
    url: str | None = None
    api_key: str | None = None
    home: Path | None = None
    http_timeout_s: float = DEFAULT_HTTP_TIMEOUT_S
    ingest_wait_s: float = DEFAULT_INGEST_WAIT_S
    session_tokens: int = DEFAULT_SESSION_TOKENS
    prompt_tokens: int = DEFAULT_PROMPT_TOKENS
    min_similarity: float = DEFAULT_MIN_SIMILARITY
    agent_id: str = DEFAULT_AGENT_ID
    problems: tuple[str, ...] = field(default=(), compare=False)

    @property
    def remote(self) -> bool:
        return bool(self.url)

    @property
    def log_path(self) -> Path:
        """The hook log: in the home even when a server holds the memories."""
        return (self.home or default_home()) / LOG_DIR / LOG_FILE

    @classmethod
    def from_env(
        cls, environ: Mapping[str, str] | None = None, home: Path | None = None
    ) -> HookConfig:
        env = os.environ if environ is None else environ
        problems: list[str] = []

        def first(names: tuple[str, ...]) -> str | None:
            for name in names:
                value = env.get(name, "").strip()
                if value:
                    return value
            return None

        def number(name: str, default: float, low: float, high: float) -> float:
            raw = env.get(name, "").strip()
            if not raw:
                return default
            try:
                value = float(raw)
            except ValueError:
                value = float("nan")
            if not low <= value <= high:  # NaN fails too
                problems.append(f"{name}={raw!r} is not a number in {low:g}..{high:g}")
                return default
            return value

        def agent(raw: str) -> str:
            if raw and not is_part(raw):  # it names the agent's scope (docs/continuity.md)
                problems.append(f"{ENV_AGENT_ID}={raw!r} cannot name an agent scope")
                return DEFAULT_AGENT_ID
            return raw or DEFAULT_AGENT_ID

        home_env = env.get("MEMORYD_HOME", "").strip()
        return cls(
            url=(first(ENV_URL) or "").rstrip("/") or None,
            api_key=first(ENV_KEY),
            home=home or (Path(home_env).expanduser() if home_env else None),
            http_timeout_s=number(ENV_HTTP_TIMEOUT, DEFAULT_HTTP_TIMEOUT_S, 0.1, 60),
            ingest_wait_s=number(ENV_INGEST_WAIT, DEFAULT_INGEST_WAIT_S, 0, 20),
            session_tokens=int(number(ENV_SESSION_TOKENS, DEFAULT_SESSION_TOKENS, 0, MAX_TOKENS)),
            prompt_tokens=int(number(ENV_PROMPT_TOKENS, DEFAULT_PROMPT_TOKENS, 0, MAX_TOKENS)),
            min_similarity=number(ENV_MIN_SIMILARITY, DEFAULT_MIN_SIMILARITY, -1, 1),
            agent_id=agent(env.get(ENV_AGENT_ID, "").strip()),
            problems=tuple(problems),
        )
