"""The dashboard's conversations: the sessions memoryd captured, their turns, and what
smart ingest made of them (facts kept, noise dropped, each reconciler decision)."""

from __future__ import annotations

from urllib.parse import quote

from fastapi import APIRouter, Depends, Request
from fastapi.responses import Response

from memoryd.dashboard.pages import PAGE_SIZE, Viewer, page
from memoryd.dashboard.protect import check_form
from memoryd.errors import NotFoundError

router = APIRouter(include_in_schema=False, dependencies=[Depends(check_form)])


@router.get("/conversations")
def conversations(request: Request, svc: Viewer, page_no: int = 1) -> Response:
    page_no = max(1, page_no)
    rows, total = svc.sessions(limit=PAGE_SIZE, offset=(page_no - 1) * PAGE_SIZE)
    pages = max(1, -(-total // PAGE_SIZE))
    return page(
        request,
        "conversations.html",
        sessions=rows,
        total=total,
        page_no=page_no,
        prev_url=f"/conversations?page_no={page_no - 1}" if page_no > 1 else None,
        next_url=f"/conversations?page_no={page_no + 1}" if page_no < pages else None,
        quote=quote,
    )


@router.get("/conversations/{session_id:path}")
def conversation(request: Request, svc: Viewer, session_id: str) -> Response:
    turns = svc.session_messages(session_id)
    if not turns:
        raise NotFoundError(f"conversation {session_id}")
    distilled, _ = svc.list_memories(session_id=session_id, order="asc", limit=200)
    return page(
        request,
        "conversation.html",
        session_id=session_id,
        turns=turns,
        tasks=svc.session_tasks(session_id),
        distilled=distilled,
    )
