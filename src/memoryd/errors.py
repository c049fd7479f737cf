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


class StorageDamagedError(StorageError):
    """The database is damaged, or gone where it held data.

    memoryd refuses to start on it, or, when the damage shows while it runs,
    stops writing (reads go on where they can) until a backup is restored.
    """

    code = "storage_damaged"
    prefix = "storage damaged"
    http_status = 503


class StorageFullError(StorageError):
    """The disk (or the database's size limit) is full: this write did not happen, nothing
    else is lost, and writes work again once there is room."""

    code = "storage_full"
    prefix = "storage full"
    http_status = 507


class StorageReadOnlyError(StorageError):
    """The database cannot be written (a read-only file system or file): reads go on."""

    code = "storage_read_only"
    prefix = "storage read-only"
    http_status = 503


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


class PayloadTooLargeError(MemorydError):
    """A file or body over the configured size limit."""

    code = "payload_too_large"
    prefix = "payload too large"
    http_status = 413


class MissingExtraError(MemorydError):
    """A feature whose libraries are an extra that is not installed (``memoryd[server]``)."""

    code = "missing_extra"
    prefix = "missing extra"
    http_status = 501
