"""Tenants and their API keys: who is calling, decided once per request.

A key is a random secret, shown once, stored as its SHA-256 digest (a 256-bit
secret needs no slow hash: nothing can be guessed), and separate from the
tenant id, so ids can be shared (members, share-to-user) without sharing
access, and a leaked key can be revoked without losing the tenant.
"""

from __future__ import annotations

import hashlib
import logging
import secrets
import threading

from memoryd.engine import Engine
from memoryd.errors import StorageError, UnauthorizedError, ValidationError
from memoryd.models import ApiKey, Tenant, new_id, personal_space, utcnow

KEY_PREFIX = "mk_"
KEY_BYTES = 32
# characters of the secret kept in clear, so a person can tell keys apart
SHOWN_PREFIX_CHARS = 10
MAX_NAME_CHARS = 200
USE_RESOLUTION_S = 60

log = logging.getLogger(__name__)


def hash_key(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def check_name(name: object, what: str = "name") -> str:
    if not isinstance(name, str):
        raise ValidationError(f"{what} must be a string")
    if len(name) > MAX_NAME_CHARS:
        raise ValidationError(f"{what} is longer than {MAX_NAME_CHARS} characters")
    return name.strip()


class Tenants:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.store = engine.store
        self._noting: set[str] = set()  # keys whose use is being recorded now
        self._noting_lock = threading.Lock()

    def create(self, name: str = "") -> tuple[Tenant, str]:
        """A new tenant with its personal space and a first key (the secret is returned)."""
        tenant_id = new_id()
        tenant = Tenant(id=tenant_id, name=check_name(name) or f"tenant-{tenant_id[:8]}")
        self.store.create_tenant(tenant, personal_space(tenant_id))
        _, secret = self.create_key(tenant_id, "default")
        return tenant, secret

    def create_key(self, tenant_id: str, name: str = "") -> tuple[ApiKey, str]:
        secret = KEY_PREFIX + secrets.token_urlsafe(KEY_BYTES)
        key = ApiKey(
            id=new_id(),
            tenant_id=tenant_id,
            prefix=secret[:SHOWN_PREFIX_CHARS],
            name=check_name(name),
            created_at=utcnow(),
        )
        self.store.add_api_key(key, hash_key(secret))
        return key, secret

    def list_keys(self, tenant_id: str) -> list[ApiKey]:
        return self.store.list_api_keys(tenant_id)

    def revoke_key(self, tenant_id: str, key_id: str) -> ApiKey:
        return self.store.revoke_api_key(tenant_id, key_id)

    def authenticate(self, secret: str | None) -> tuple[Tenant, ApiKey]:
        """The tenant a key belongs to; 401 for a missing, unknown or revoked key."""
        if not secret:
            raise UnauthorizedError("missing X-API-Key header")
        found = self.store.find_api_key(hash_key(secret.strip()))
        if found is None:
            raise UnauthorizedError("invalid API key")
        key, tenant = found
        if tenant.status != "active":
            raise UnauthorizedError(f"tenant {tenant.id} is {tenant.status}")
        return tenant, key

    def note_use(self, key: ApiKey) -> None:
        """Record when a key was last used, at most once a minute (a write per request is waste).

        The write happens in the background: a request never waits for the
        write lock that another process may hold for seconds.
        """
        now = utcnow()
        if key.last_used_at is not None and (now - key.last_used_at).total_seconds() < (
            USE_RESOLUTION_S
        ):
            return
        with self._noting_lock:
            if key.id in self._noting:
                return
            self._noting.add(key.id)
        self.engine.background.submit(self._record_use, key.id)

    def _record_use(self, key_id: str) -> None:
        try:
            self.store.touch_api_key(key_id)
        except StorageError as exc:  # when a key was last used is not worth failing over
            log.warning("could not record the use of key %s: %s", key_id, exc)
        finally:
            with self._noting_lock:
                self._noting.discard(key_id)

    def has_keys(self) -> bool:
        return self.store.count_api_keys() > 0
