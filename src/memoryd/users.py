"""Per-user memory on one home: a user id names a tenant of the local store.

An app that serves several people (``Memory().add(..., user_id="alice")``,
``memoryd --user alice …``) keeps each one's memories apart without running
a server: user ``alice`` is the tenant ``user:alice``, with a personal space
of its own. Tenants are what the server isolates too, so the same rules hold
on every door: a user sees their own memories and what was shared into a
space they belong to, nothing else. No user id means the local tenant, the
one the CLI, the SDK and ``memoryd serve``'s first key use by default.
"""

from __future__ import annotations

import re

from memoryd.errors import ValidationError

USER_TENANT_PREFIX = "user:"
LOCAL_TENANT = "local"
MAX_USER_ID_CHARS = 128
# letters, digits and the punctuation of usernames and e-mail addresses
_USER_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@+-]*")


def user_tenant(user_id: object) -> str:
    """The tenant id of ``user_id``; ``None`` is the local tenant."""
    if user_id is None:
        return LOCAL_TENANT
    if not isinstance(user_id, str):
        raise ValidationError(f"user_id must be a string, got {type(user_id).__name__}")
    if len(user_id) > MAX_USER_ID_CHARS or not _USER_ID.fullmatch(user_id):
        raise ValidationError(
            f"invalid user_id {user_id[:50]!r}: use up to {MAX_USER_ID_CHARS} letters, digits "
            "and . _ @ + - (starting with a letter or digit)"
        )
    return USER_TENANT_PREFIX + user_id
