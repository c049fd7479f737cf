"""Bad input gets a clear error, and nothing stored before it is lost or changed."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from backends import change_marker, rows

from memoryd.errors import NotFoundError, ValidationError
from memoryd.models import Message, utcnow
from memoryd.service import MemoryService
from memoryd.store import MemoryFilter

CATEGORIES = "profile, preferences, entities, events, cases, patterns"
STATES = "active, archived, deleted"
TIERS = "core, working, peripheral"
TYPES = "pinned, insight, session"


@pytest.fixture
def stored(service: MemoryService) -> Iterator[dict[str, Any]]:
    """A store with data in it, and a check that the data is unchanged afterwards."""
    memory = service.add("The user's dog is named Biscuit", tags=["pets"], importance=0.7)
    service.ingest([{"role": "user", "content": "We walked Biscuit by the lake"}], session_id="s1")
    before = {
        "memory": service.get(memory.id).to_json(),
        "list": service.list_memories(limit=100, memory_type="pinned"),
        "sessions": service.session_messages(),
        "history": service.history(memory.id),
        "seq": change_marker(service.store),
        "rows": rows(service.store, "SELECT COUNT(*) FROM memories"),
    }
    yield {"id": memory.id}
    assert service.get(memory.id).to_json() == before["memory"]
    assert service.list_memories(limit=100, memory_type="pinned") == before["list"]
    assert service.session_messages() == before["sessions"]
    assert service.history(memory.id) == before["history"]
    assert change_marker(service.store) == before["seq"]
    assert rows(service.store, "SELECT COUNT(*) FROM memories") == before["rows"]
    hits = service.search("what is the dog called", touch=False).results
    assert hits[0].memory.id == memory.id


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("", "content cannot be empty"),
        ("   \n\t ", "content cannot be empty"),
        (None, "content must be a string"),
        (42, "content must be a string"),
        ("x" * 200_001, "longer than 200000"),
    ],
    ids=["empty", "whitespace", "none", "number", "too-long"],
)
def test_add_rejects_bad_content(
    service: MemoryService, stored: dict[str, Any], content: Any, message: str
) -> None:
    with pytest.raises(ValidationError, match=message):
        service.add(content)


@pytest.mark.parametrize("content", ["", "   "])
def test_update_rejects_empty_content(
    service: MemoryService, stored: dict[str, Any], content: str
) -> None:
    with pytest.raises(ValidationError, match="content cannot be empty"):
        service.update(stored["id"], content=content)


@pytest.mark.parametrize(
    ("field", "value", "allowed"),
    [
        ("category", "hobbies", CATEGORIES),
        ("tier", "legendary", TIERS),
        ("memory_type", "dream", TYPES),
    ],
)
def test_add_rejects_unknown_enum_naming_the_allowed_values(
    service: MemoryService, stored: dict[str, Any], field: str, value: str, allowed: str
) -> None:
    with pytest.raises(ValidationError) as info:
        service.add("I like painting", **{field: value})
    assert value in str(info.value)
    assert f"expected one of {allowed}" in str(info.value)


@pytest.mark.parametrize(
    ("field", "value", "allowed"),
    [
        ("state", "frozen", STATES),
        ("category", "hobbies", CATEGORIES),
        ("tier", "legendary", TIERS),
        ("memory_type", "dream", TYPES),
    ],
)
def test_update_rejects_unknown_enum_naming_the_allowed_values(
    service: MemoryService, stored: dict[str, Any], field: str, value: str, allowed: str
) -> None:
    with pytest.raises(ValidationError, match=f"expected one of {allowed}"):
        service.update(stored["id"], **{field: value})


def test_unknown_state_error_says_memory_state(
    service: MemoryService, stored: dict[str, Any]
) -> None:
    with pytest.raises(ValidationError, match="unknown memory state: frozen"):
        service.list_memories(state="frozen")


@pytest.mark.parametrize(
    "call",
    [
        lambda s: s.list_memories(category="hobbies"),
        lambda s: s.list_memories(state="gone"),
        lambda s: s.list_memories(tier="legendary"),
        lambda s: s.list_memories(memory_type="dream"),
        lambda s: s.search("dog", category="hobbies"),
        lambda s: s.search("dog", memory_type="dream"),
    ],
    ids=["list-cat", "list-state", "list-tier", "list-type", "search-cat", "search-type"],
)
def test_filters_reject_unknown_enums(
    service: MemoryService, stored: dict[str, Any], call: Callable[[MemoryService], Any]
) -> None:
    with pytest.raises(ValidationError, match="expected one of"):
        call(service)


def test_enum_values_are_case_insensitive(service: MemoryService) -> None:
    memory = service.add("I ride a bike to work", category="  Events ", tier="CORE")
    assert memory.category.value == "events"
    assert memory.tier.value == "core"


BAD_IDS = ["", "   ", "has space", "tab\there", "x" * 201, None, 7]


@pytest.mark.parametrize(
    "call",
    [
        lambda s, i: s.get(i),
        lambda s, i: s.update(i, importance=0.9),
        lambda s, i: s.delete(i),
        lambda s, i: s.history(i),
        lambda s, i: s.batch_delete(ids=[i]),
    ],
    ids=["get", "update", "delete", "history", "batch_delete"],
)
def test_bad_ids_are_validation_errors(
    service: MemoryService, stored: dict[str, Any], call: Callable[[MemoryService, Any], Any]
) -> None:
    for bad in BAD_IDS:
        with pytest.raises(ValidationError, match="memory id"):
            call(service, bad)


@pytest.mark.parametrize(
    "call",
    [
        lambda s, i: s.get(i),
        lambda s, i: s.update(i, importance=0.9),
        lambda s, i: s.update(i, content="new words"),
        lambda s, i: s.delete(i),
        lambda s, i: s.history(i),
    ],
    ids=["get", "update", "update-content", "delete", "history"],
)
def test_unknown_ids_are_not_found(
    service: MemoryService, stored: dict[str, Any], call: Callable[[MemoryService, str], Any]
) -> None:
    missing = str(uuid.uuid4())
    with pytest.raises(NotFoundError, match=missing):
        call(service, missing)


def test_batch_delete_skips_unknown_ids(service: MemoryService, stored: dict[str, Any]) -> None:
    assert service.batch_delete(ids=[str(uuid.uuid4())]) == {"deleted": 0, "mode": "ids"}


@pytest.mark.parametrize("field", ["importance", "confidence"])
def test_unit_fields_out_of_range(
    service: MemoryService, stored: dict[str, Any], field: str
) -> None:
    for value in (-0.01, 1.01, 5, float("nan"), float("inf")):
        with pytest.raises(ValidationError, match=f"{field} must be between 0 and 1"):
            service.add("I like painting", **{field: value})
        with pytest.raises(ValidationError, match=f"{field} must be between 0 and 1"):
            service.update(stored["id"], **{field: value})


def test_non_numeric_importance_is_a_validation_error(
    service: MemoryService, stored: dict[str, Any]
) -> None:
    with pytest.raises(ValidationError, match="importance"):
        service.add("I like painting", importance="high")
    with pytest.raises(ValidationError, match="importance"):
        service.update(stored["id"], importance="high")


def test_other_bad_input(service: MemoryService, stored: dict[str, Any]) -> None:
    with pytest.raises(ValidationError, match="tags must be a list of strings"):
        service.add("I like painting", tags=[1, 2])
    now = utcnow()
    with pytest.raises(ValidationError, match="valid_to must be after valid_from"):
        service.add("I like painting", valid_from=now, valid_to=now)
    with pytest.raises(ValidationError, match="cannot be updated"):
        service.update(stored["id"], tenant_id="b")
    with pytest.raises(ValidationError, match="cannot be updated"):
        service.update(stored["id"], created_at="2020-01-01")
    with pytest.raises(ValidationError, match="the query is empty"):
        service.search("   ")
    with pytest.raises(ValidationError, match="limit"):
        service.search("dog", limit=0)
    with pytest.raises(ValidationError, match="min_score"):
        service.search("dog", min_score=1.5)
    with pytest.raises(ValidationError, match="limit"):
        service.list_memories(limit=-1)
    with pytest.raises(ValidationError, match="offset"):
        service.list_memories(offset=-5)
    with pytest.raises(ValidationError, match="limit"):
        service.list_memories(limit=1001)
    with pytest.raises(ValidationError, match="provide either"):
        service.batch_delete()
    with pytest.raises(ValidationError, match="provide either"):
        service.batch_delete(ids=[])
    with pytest.raises(ValidationError, match="confirmation"):
        service.delete_all()
    with pytest.raises(ValidationError, match="confirmation"):
        service.delete_all(confirm=False)


def test_delete_all_without_confirm_deletes_nothing(
    service: MemoryService, stored: dict[str, Any]
) -> None:
    with pytest.raises(ValidationError):
        service.delete_all()
    assert service.batch_delete(filter=MemoryFilter()) == {"would_delete": 2}


@pytest.mark.parametrize(
    ("messages", "message"),
    [
        ([], "messages array is empty"),
        ([{"role": "user"}], "message 0 needs string 'role' and 'content'"),
        ([{"content": "hi"}], "message 0 needs string 'role' and 'content'"),
        ([{"role": "user", "content": None}], "message 0 needs"),
        ([{"role": 3, "content": "hi"}], "message 0 needs"),
        (
            [{"role": "user", "content": "fine"}, {"role": "user"}],
            "message 1 needs string 'role' and 'content'",
        ),
    ],
    ids=["empty", "no-content", "no-role", "null-content", "int-role", "second-bad"],
)
def test_ingest_rejects_bad_messages(
    service: MemoryService, stored: dict[str, Any], messages: list[Any], message: str
) -> None:
    with pytest.raises(ValidationError, match=message):
        service.ingest(messages, session_id="s1")
    with pytest.raises(ValidationError, match=message):
        service.ingest(messages, session_id="s-new")


def test_ingest_rejects_bad_options(service: MemoryService, stored: dict[str, Any]) -> None:
    one = [Message(role="user", content="A brand new message")]
    with pytest.raises(ValidationError, match="unknown ingest mode"):
        service.ingest(one, mode="clever")
    with pytest.raises(ValidationError, match="1 dates for 2 messages"):
        service.ingest(one * 2, dates=[None])
    with pytest.raises(ValidationError, match="tags must be a list of strings"):
        service.ingest(one, tags=[1])
