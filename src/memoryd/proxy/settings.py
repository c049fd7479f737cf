"""The memory proxy's settings, one document per tenant, cached and invalidated on write.

The defaults and limits are seed 002's: memory on, a budget of 2000 tokens
(0 to 16000), memories of the last 30 days (1 to 365), the ``hybrid``
strategy, and the providers that reject the system role. A tenant may also
map models to upstreams of its own; the server's default upstream
(``MEMORYD_UPSTREAM_URL``) serves every other model.
"""

from __future__ import annotations

import fnmatch
import threading
import time
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic import ValidationError as PydanticValidationError
from pydantic.alias_generators import to_camel

from memoryd.config import Settings
from memoryd.errors import ValidationError
from memoryd.proxy.egress import Egress, parse_upstream
from memoryd.store.protocol import SettingsRecords

SETTINGS_NAME = "memory"
DEFAULT_MAX_TOKENS = 2000
MAX_MAX_TOKENS = 16000
DEFAULT_RETENTION_DAYS = 30
MAX_RETENTION_DAYS = 365
# providers that answer 400 to a system message: the block goes into the first user message
NO_SYSTEM_ROLE = ("o1", "o1-mini", "o1-preview", "glm", "glmt", "glm-cn", "zai", "qianfan")
MASK = "********"
# another worker process may write the settings: a cached copy is trusted this long at most
CACHE_TTL_S = 5.0

Strategy = Literal["recent", "semantic", "hybrid"]


class _Camel(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")


class Upstream(_Camel):
    """Where a model's requests go: a base URL ending in ``/v1`` and its key."""

    url: str
    api_key: str = ""

    @field_validator("url")
    @classmethod
    def _http(cls, value: str) -> str:
        try:
            parse_upstream(value)
        except ValidationError as exc:
            raise ValueError(exc.message) from None
        return value.rstrip("/")


class MemorySettings(_Camel):
    """What a tenant's requests through the proxy get; the wire names are camelCase."""

    enabled: bool = True
    max_tokens: int = Field(default=DEFAULT_MAX_TOKENS, ge=0, le=MAX_MAX_TOKENS)
    retention_days: int = Field(default=DEFAULT_RETENTION_DAYS, ge=1, le=MAX_RETENTION_DAYS)
    strategy: Strategy = "hybrid"
    no_system_role_providers: list[str] = Field(default_factory=lambda: list(NO_SYSTEM_ROLE))
    # model name or glob ("claude-*") -> upstream; the first match in order wins
    upstreams: dict[str, Upstream] = Field(default_factory=dict)

    def public(self) -> dict[str, Any]:
        """The wire form, with upstream keys masked: a settings page never shows a secret."""
        data = self.model_dump(by_alias=True)
        for upstream in data["upstreams"].values():
            if upstream["apiKey"]:
                upstream["apiKey"] = MASK
        return data

    def upstream_for(self, model: str) -> Upstream | None:
        for pattern, upstream in self.upstreams.items():
            if pattern == model or fnmatch.fnmatchcase(model, pattern):
                return upstream
        return None

    def rejects_system_role(self, model: str) -> bool:
        """``o1``, ``glm-4.6`` or ``glm/glm-4.6``: the provider named by the model's start."""
        name = model.split("/", 1)[0].strip().lower()
        return any(name == p or name.startswith(p + "-") for p in self.no_system_role_providers)


class TenantSettings:
    """Each tenant's :class:`MemorySettings`, read once and kept until written."""

    def __init__(self, store: SettingsRecords, settings: Settings) -> None:
        self.store = store
        self.settings = settings
        self.egress = Egress(settings.upstream_allow)
        self._cache: dict[str, tuple[float, MemorySettings]] = {}
        self._lock = threading.Lock()

    def cached(self, tenant_id: str) -> MemorySettings | None:
        """The tenant's settings when read recently enough, else None. No database
        read: the event loop may ask, and go to a thread only for a miss."""
        with self._lock:
            cached = self._cache.get(tenant_id)
        if cached is not None and time.monotonic() - cached[0] < CACHE_TTL_S:
            return cached[1]
        return None

    def get(self, tenant_id: str) -> MemorySettings:
        known = self.cached(tenant_id)
        if known is not None:
            return known
        now = time.monotonic()
        stored = self.store.get_tenant_setting(tenant_id, SETTINGS_NAME)
        value = MemorySettings.model_validate(stored) if stored else MemorySettings()
        with self._lock:
            self._cache[tenant_id] = (now, value)
        return value

    def update(self, tenant_id: str, changes: Any) -> MemorySettings:
        """Merge ``changes`` (camelCase) into the tenant's settings, check, store, uncache."""
        if not isinstance(changes, dict):
            raise ValidationError("the settings body must be a JSON object")
        current = self.get(tenant_id)
        merged = current.model_dump(by_alias=True)
        merged.update(changes)
        kept = current.upstreams
        for pattern, upstream in (merged.get("upstreams") or {}).items():
            # a masked key sent back unchanged keeps the stored one
            if isinstance(upstream, dict) and upstream.get("apiKey") == MASK and pattern in kept:
                upstream["apiKey"] = kept[pattern].api_key
        try:
            value = MemorySettings.model_validate(merged)
        except PydanticValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()
            )
            raise ValidationError(f"invalid memory settings: {problems}") from None
        for upstream in value.upstreams.values():  # only where the operator allows
            self.egress.check(upstream.url)
        self.store.put_tenant_setting(tenant_id, SETTINGS_NAME, value.model_dump(by_alias=True))
        with self._lock:
            self._cache.pop(tenant_id, None)
        return value
