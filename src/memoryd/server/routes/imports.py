"""File upload and import routes (§4.14–4.15): answered, not yet served.

They exist so that clients get a clear 501 with a JSON error instead of a
404 that looks like a wrong URL; the import pipeline is built separately.
"""

from __future__ import annotations

from fastapi import APIRouter

from memoryd.errors import NotImplementedYetError
from memoryd.server.deps import Caller

router = APIRouter(tags=["imports"])
NOT_YET = "file import is not available in this version of memoryd"


def _refuse() -> None:
    raise NotImplementedYetError(NOT_YET)


@router.post("/v1/files", status_code=202)
def upload_file(svc: Caller) -> None:
    _refuse()


@router.post("/v1/imports")
def create_import(svc: Caller) -> None:
    _refuse()


@router.get("/v1/imports")
def list_imports(svc: Caller) -> None:
    _refuse()


@router.post("/v1/imports/cross-reconcile")
def cross_reconcile(svc: Caller) -> None:
    _refuse()


@router.get("/v1/imports/{import_id}")
def get_import(import_id: str, svc: Caller) -> None:
    _refuse()


@router.post("/v1/imports/{import_id}/intelligence")
def rerun_intelligence(import_id: str, svc: Caller) -> None:
    _refuse()


@router.post("/v1/imports/{import_id}/rollback")
def rollback_import(import_id: str, svc: Caller) -> None:
    _refuse()
