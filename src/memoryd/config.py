"""Settings: defaults, then a TOML file, then ``MEMORYD_*`` environment variables.

The embedded default needs nothing configured: a home directory by the XDG
convention, the bundled local embedding model, no reranker, no LLM.
"""

from __future__ import annotations

from contextvars import ContextVar
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, field_validator
from pydantic import ValidationError as PydanticValidationError
from pydantic_settings import (
    BaseSettings,
    NoDecode,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from memoryd.errors import ValidationError
from memoryd.home import CONFIG_FILENAME as CONFIG_FILENAME
from memoryd.home import config_file, default_home
from memoryd.store.hnsw_index import DEFAULT_HNSW_THRESHOLD

POSTGRES_SCHEMES = ("postgresql://", "postgres://")
_HOME: ContextVar[Path | None] = ContextVar("memoryd_home", default=None)
__all__ = ["CONFIG_FILENAME", "Settings", "config_file", "default_home", "load_settings"]


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="MEMORYD_", extra="ignore")

    home: Path = Field(default_factory=default_home)
    # empty: SQLite in the home; postgresql://user:pass@host/db: that PostgreSQL database
    database_url: str = ""

    # embeddings
    # local: the bundled English MiniLM; multilingual: USE multilingual v3 (an optional extra)
    embedder: Literal["local", "multilingual", "openai"] = "local"
    embed_model: str = ""  # openai-compatible model name (local ignores it)
    embed_base_url: str = "https://api.openai.com/v1"
    embed_api_key: str = ""
    embed_dimensions: int | None = None
    embed_batch_size: int = 8
    # threads of one call of the local embedding model; unset: the cores, up to four
    # (memoryd.threads; BLAS always gets one)
    threads: int | None = Field(default=None, ge=1)

    # cross-encoder rerank (stage 6); empty provider skips the stage; "llm": the LLM below
    rerank_provider: Literal["", "jina", "voyage", "cohere", "pinecone", "llm"] = ""
    rerank_api_key: str = ""
    rerank_model: str = ""
    rerank_base_url: str = ""

    # LLM (smart ingest): empty base URL and model means no LLM
    llm_base_url: str = ""  # any OpenAI-compatible endpoint, e.g. http://localhost:11434/v1
    llm_api_key: str = ""
    llm_model: str = ""
    llm_timeout_s: float = Field(default=60.0, gt=0)
    llm_json_mode: bool = True  # send response_format; off for servers that mishandle it

    # the context engine (docs/context.md): tighter recall and summary budgets when on
    context_optimization: bool = False
    # the agent's identity, injected verbatim as recall layer L0: text, and/or files
    context_identity: str = ""
    context_identity_files: Annotated[list[str], NoDecode] = Field(default_factory=list)

    # the vector index switches from exact NumPy to HNSW past this many rows in a space
    hnsw_threshold: int = DEFAULT_HNSW_THRESHOLD

    # memoryd serve consolidates every tenant's memories this often (hours; 0: never)
    consolidate_interval_h: float = Field(default=24.0, ge=0)

    # session checkpoints (seed 004's defaults; memoryd.continuity)
    checkpoint_max_prepend_chars: int = Field(default=4000, ge=200, le=9000)
    checkpoint_max_msg_chars: int = Field(default=500, ge=20)
    checkpoint_max_recent_msgs: int = Field(default=3, ge=0)
    checkpoint_max_recent_tools: int = Field(default=5, ge=0)
    checkpoint_max_modified_files: int = Field(default=20, ge=0)
    # layered session memory: days each layer is kept (0: for good); seed 004's defaults
    session_d6_retention_days: float = Field(default=7.0, ge=0)  # raw transcript
    session_d5_retention_days: float = Field(default=7.0, ge=0)  # exchange summary
    session_d2_retention_days: float = Field(default=0.0, ge=0)  # outline
    session_d1_retention_days: float = Field(default=0.0, ge=0)  # gist
    session_d0_retention_days: float = Field(default=0.0, ge=0)  # themes
    # memoryd serve condenses resting sessions and applies retention this often (0: never)
    session_consolidate_interval_min: float = Field(default=15.0, ge=0)

    # server (memoryd serve)
    admin_key: str = ""  # may create tenants when creation is not open
    open_tenants: bool | None = None  # None: open only when bound to loopback
    # web origins whose pages may call the server (CORS); none by default (server/browser.py)
    cors_origins: Annotated[list[str], NoDecode] = Field(default_factory=list)
    # Host names the server answers to besides this machine's (server/browser.py)
    allowed_hosts: Annotated[list[str], NoDecode] = Field(default_factory=list)
    max_body_bytes: int = Field(default=2 * 1024 * 1024, gt=0)
    # messages one POST /v1/memories may carry: each is embedded before the answer, so one
    # request of thousands would hold a worker for minutes and slow every search meanwhile
    max_ingest_messages: int = Field(default=200, gt=0)
    # the longest a request body may stall between two parts before the request gets a 408
    body_timeout_s: float = Field(default=30.0, gt=0)
    # file import (POST /v1/imports, /v1/files, memoryd import-file)
    max_import_bytes: int = Field(default=50 * 1024 * 1024, gt=0)

    # the memory proxy (POST /v1/chat/completions, /v1/messages): the default chat upstream
    # the requests go on to, e.g. https://api.openai.com/v1 (a tenant may map models to others)
    upstream_url: str = ""
    upstream_api_key: str = ""
    # where a tenant's own upstreams may point (proxy/egress.py): "public" (any public
    # address), origins ("http://10.0.0.7:11434", private or not) and host patterns
    # ("https://*.openai.azure.com"); comma-separated in the environment
    upstream_allow: Annotated[list[str], NoDecode] = Field(default_factory=lambda: ["public"])
    # the longest wait for the upstream to connect, and for each part of its answer
    upstream_connect_timeout_s: float = Field(default=10.0, gt=0)
    upstream_timeout_s: float = Field(default=300.0, gt=0)

    @field_validator(
        "cors_origins", "allowed_hosts", "context_identity_files", "upstream_allow", mode="before"
    )
    @classmethod
    def _comma_list(cls, value: Any) -> Any:
        """``a,b`` in an environment variable; a TOML array as it is."""
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    @field_validator("database_url")
    @classmethod
    def _postgres_url(cls, value: str) -> str:
        """Empty (SQLite in the home) or a PostgreSQL URL: anything else is a typo."""
        if value and not value.startswith(POSTGRES_SCHEMES):
            raise ValueError(
                "must be a PostgreSQL URL (postgresql://user:password@host:5432/database), "
                "or empty for SQLite in the home directory"
            )
        return value

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        home = _HOME.get() or default_home()
        toml = TomlConfigSettingsSource(settings_cls, toml_file=config_file(home))
        return (init_settings, env_settings, toml)


def load_settings(home: Path | str | None = None, **overrides: Any) -> Settings:
    """Settings for ``home`` (or the default home): overrides, then env, then its file."""
    path = None if home is None else Path(home).expanduser()
    token = _HOME.set(path)
    try:
        return Settings(**overrides) if path is None else Settings(home=path, **overrides)
    except PydanticValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()
        )
        raise ValidationError(
            f"invalid settings ({problems}); check MEMORYD_* variables and {CONFIG_FILENAME}"
        ) from None
    except (OSError, ValueError) as exc:  # an unreadable or malformed config.toml
        raise ValidationError(f"cannot read the settings file: {exc}") from None
    finally:
        _HOME.reset(token)
