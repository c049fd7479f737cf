"""The dashboard's pages: sign-in, memories (list, search, add), one memory (edit, delete).

Each page is a translation between a form or a query string and one
``MemoryService`` call, rendered by a template. Errors are memoryd's own:
a ``MemorydError`` on a dashboard path becomes an HTML page with the same
status and message the API would give.
"""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import urlencode

from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import Response

from memoryd.dashboard.pages import PAGE_SIZE, SEARCH_LIMIT, Viewer, page, see_other
from memoryd.dashboard.protect import check_form
from memoryd.errors import NotFoundError, UnauthorizedError, ValidationError
from memoryd.models import Memory, RelationType
from memoryd.service import MemoryService
from memoryd.web.session import COOKIE

MAX_CHAIN = 20  # versions shown each way from a memory

router = APIRouter(include_in_schema=False, dependencies=[Depends(check_form)])


# ------------------------------------------------------------------ sign in
@router.get("/sign-in")
def sign_in_form(request: Request) -> Response:
    return page(request, "sign_in.html")


@router.post("/sign-in")
def sign_in(request: Request, api_key: Annotated[str, Form()] = "") -> Response:
    try:
        request.app.state.tenants.authenticate(api_key.strip() or None)
    except UnauthorizedError as exc:
        return page(request, "sign_in.html", status=401, error=exc.message)
    response = see_other("/")
    # no Max-Age: a session cookie, gone when the browser closes
    response.set_cookie(COOKIE, api_key.strip(), httponly=True, samesite="strict", path="/")
    return response


@router.post("/sign-out")
def sign_out() -> Response:
    response = see_other("/sign-in")
    response.delete_cookie(COOKIE, path="/")
    return response


# ------------------------------------------------------------------ memories
@router.get("/")
def memories(
    request: Request,
    svc: Viewer,
    page_no: int = 1,
    memory_type: str = "",
    category: str = "",
    state: str = "",
    tier: str = "",
    tags: str = "",
    space_id: str = "",
    agent_id: str = "",
) -> Response:
    filters = {
        "memory_type": memory_type,
        "category": category,
        "state": state,
        "tier": tier,
        "tags": tags,
        "space_id": space_id,
        "agent_id": agent_id,
    }
    page_no = max(1, page_no)
    rows, total = svc.list_memories(
        limit=PAGE_SIZE,
        offset=(page_no - 1) * PAGE_SIZE,
        memory_type=memory_type or None,
        category=category or None,
        state=state or None,
        tier=tier or None,
        tags=[t.strip() for t in tags.split(",") if t.strip()] or None,
        space_id=space_id or None,
        agent_id=agent_id.strip() or None,
    )
    pages = max(1, -(-total // PAGE_SIZE))
    query = {k: v for k, v in filters.items() if v}
    return page(
        request,
        "memories.html",
        memories=rows,
        total=total,
        page_no=page_no,
        pages=pages,
        filters=filters,
        prev_url=f"/?{urlencode({**query, 'page_no': page_no - 1})}" if page_no > 1 else None,
        next_url=f"/?{urlencode({**query, 'page_no': page_no + 1})}" if page_no < pages else None,
        stats=svc.stats(),
        spaces=svc.spaces.list_spaces(),
    )


@router.get("/search")
def search(request: Request, svc: Viewer, q: str = "", trace: bool = False) -> Response:
    """The hits of a query, as the fragment the search box swaps in (or a whole page)."""
    response = svc.search(q, limit=SEARCH_LIMIT, include_trace=trace) if q.strip() else None
    fragment = request.headers.get("HX-Request") == "true"
    return page(
        request,
        "results.html" if fragment else "search.html",
        q=q,
        results=response.results if response else [],
        trace=response.trace if response else None,
        traced=trace,  # the box stays ticked on a page the URL opened with it
    )


@router.get("/memories/new")
def new_memory(request: Request, svc: Viewer) -> Response:
    return page(request, "form.html", memory=None, values={"category": "preferences"})


def memory_form(
    content: Annotated[str, Form()] = "",
    category: Annotated[str, Form()] = "preferences",
    tags: Annotated[str, Form()] = "",
    importance: Annotated[str, Form()] = "0.5",
) -> dict[str, str]:
    """The add and edit forms' fields, as typed (shown again when they are refused)."""
    return {"content": content, "category": category, "tags": tags, "importance": importance}


MemoryForm = Annotated[dict[str, str], Depends(memory_form)]


def _save(request: Request, memory: Memory | None, values: dict[str, str], write: Any) -> Response:
    """``write(content, **fields)``, then the memory's page; a refusal shows the form again."""
    try:
        saved = write(values["content"], **_fields(values))
    except ValidationError as exc:
        return page(request, "form.html", 400, memory=memory, values=values, error=exc.message)
    return see_other(f"/memories/{saved.id}")


@router.post("/memories/new")
def add_memory(request: Request, svc: Viewer, values: MemoryForm) -> Response:
    return _save(request, None, values, svc.add)


@router.get("/memories/{memory_id}")
def memory_page(request: Request, svc: Viewer, memory_id: str) -> Response:
    memory = svc.get(memory_id)
    teams = [s for s in svc.spaces.list_spaces() if s.id != memory.space_id]
    return page(
        request,
        "memory.html",
        memory=memory,
        history=svc.history(memory.id),
        spaces=teams,
        chain=supersede_chain(svc, memory),
    )


@router.get("/memories/{memory_id}/edit")
def edit_form(request: Request, svc: Viewer, memory_id: str) -> Response:
    memory = svc.get(memory_id)
    return page(request, "form.html", memory=memory, values=_values(memory))


@router.post("/memories/{memory_id}/edit")
def edit_memory(request: Request, svc: Viewer, memory_id: str, values: MemoryForm) -> Response:
    memory = svc.get(memory_id)
    return _save(
        request, memory, values, lambda content, **f: svc.update(memory.id, content=content, **f)
    )


@router.post("/memories/{memory_id}/delete")
def delete_memory(svc: Viewer, memory_id: str) -> Response:
    svc.delete(svc.get(memory_id).id)
    return see_other("/")


def supersede_chain(svc: MemoryService, memory: Memory) -> list[Memory]:
    """The versions of a fact, oldest first: what this memory superseded, back to the
    first statement, then what superseded it, up to the current one (``MAX_CHAIN`` each
    way). A single memory with neither is a chain of one."""

    def superseded(m: Memory) -> str | None:
        return next(
            (r.target_id for r in m.relations if r.relation_type is RelationType.SUPERSEDES), None
        )

    older: list[Memory] = []
    newer: list[Memory] = []
    seen = {memory.id}
    for step, out in ((superseded, older), (lambda m: m.superseded_by, newer)):
        current = memory
        while len(out) < MAX_CHAIN and (next_id := step(current)) and next_id not in seen:
            try:
                current = svc.get(next_id)
            except NotFoundError:  # removed for good, or not this tenant's
                break
            seen.add(current.id)
            out.append(current)
    return [*reversed(older), memory, *newer]


def _fields(values: dict[str, str]) -> dict[str, Any]:
    importance, tags = values["importance"], values["tags"]
    try:
        weight = float(importance)
    except ValueError:
        raise ValidationError(
            f"importance must be a number from 0 to 1, not {importance!r}"
        ) from None
    return {
        "category": values["category"],
        "tags": [t.strip() for t in tags.split(",") if t.strip()],
        "importance": weight,
    }


def _values(memory: Memory) -> dict[str, Any]:
    return {
        "content": memory.content,
        "category": memory.category.value,
        "tags": ", ".join(memory.tags),
        "importance": memory.importance,
    }
