"""Errors every door can render: a stable ``code`` and a human ``message``.

The codes are those of the ourmem wire contract so the REST layer maps them
one to one; the CLI prints the message; the SDK raises them as they are.
"""

from __future__ import annotations


class MemorydError(Exception):
    code = "internal_error"
    prefix = "internal error"
    http_status = 500

    def __init__(self, detail: str) -> None:
        super().__init__(f"{self.prefix}: {detail}")
        self.detail = detail

    @property
    def message(self) -> str:
        return str(self)


class ValidationError(MemorydError):
    code = "validation_error"
    prefix = "validation error"
    http_status = 400


class NotFoundError(MemorydError):
    code = "not_found"
    prefix = "not found"
    http_status = 404


class StorageError(MemorydError):
    code = "internal_error"
    prefix = "storage error"
    http_status = 500


class EmbeddingError(MemorydError):
    code = "internal_error"
    prefix = "embedding error"
    http_status = 500


class EmbeddingMismatchError(EmbeddingError):
    """The store was built with another model: recall would be silently empty."""

    code = "embedding_mismatch"
    prefix = "embedding model mismatch"
    http_status = 409


class UnauthorizedError(MemorydError):
    """No key, or a key that is unknown, revoked or of a suspended tenant."""

    code = "unauthorized"
    prefix = "unauthorized"
    http_status = 401


class ForbiddenError(MemorydError):
    """A valid key whose tenant lacks the role the action needs."""

    code = "forbidden"
    prefix = "forbidden"
    http_status = 403


class NotImplementedYetError(MemorydError):
    """A route of the wire contract whose feature has not been built yet."""

    code = "not_implemented"
    prefix = "not implemented"
    http_status = 501
