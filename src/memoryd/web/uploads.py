"""An uploaded file as the REST API and the dashboard receive it: a multipart form.

The form is read by Starlette's multipart parser (the upload spools to a temporary file,
not to memory). Text fields follow the reference: booleans as ``true``/``1``/``false``/``0``.
"""

from __future__ import annotations

from starlette.datastructures import UploadFile
from starlette.requests import Request

from memoryd.errors import ValidationError

TEXT_FIELDS = ("file_type", "strategy", "post_process", "force", "agent_id", "space_id")
TRUE, FALSE = ("true", "1", "yes"), ("false", "0", "no")


def flag(value: str | None, name: str, default: bool) -> bool:
    if value is None or value == "":
        return default
    if value.lower() in TRUE:
        return True
    if value.lower() in FALSE:
        return False
    raise ValidationError(f"{name} must be true or false, got {value[:20]!r}")


async def read_upload_form(request: Request) -> tuple[bytes, str, dict[str, str]]:
    """The first ``file`` part's bytes and name, and the text fields."""
    kind = request.headers.get("content-type", "")
    if not kind.lower().startswith("multipart/form-data"):
        raise ValidationError("expected a multipart/form-data body with a 'file' field")
    async with request.form() as form:
        upload = form.get("file")
        if not isinstance(upload, UploadFile):
            raise ValidationError("no 'file' field")
        data = await upload.read()
        fields = {k: v for k, v in form.items() if k in TEXT_FIELDS and isinstance(v, str)}
        return data, upload.filename or "upload", fields
