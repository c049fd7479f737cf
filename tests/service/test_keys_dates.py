"""A key and a date: a keyed memory that holds from a future date still holds its key.

Before, the slot holder was looked up among memories valid now, so one with a
future ``valid_from`` was not found while it still held the key in the
store's unique index: every later add with that key was a 500 until the date
passed. On both backends.
"""

from __future__ import annotations

from datetime import timedelta

from memoryd.models import Status, utcnow
from memoryd.service import MemoryService


def test_a_key_held_from_a_future_date_takes_a_repeat_and_a_new_value(
    service: MemoryService,
) -> None:
    later = utcnow() + timedelta(days=5)
    planned = service.add("Standup moves to 10am", key="standup", valid_from=later)
    assert planned.status is Status.PENDING
    again = service.add("Standup moves to 10am", key="standup")
    assert again.id == planned.id and again.status is Status.PENDING  # the same value
    replaced = service.add("Standup stays at 9am", key="standup")
    assert replaced.status is Status.CURRENT
    old = service.get(planned.id)
    assert old.superseded_by == replaced.id
    assert old.status is Status.SUPERSEDED  # replaced before its date: it never comes to hold
    assert old.status_at(later + timedelta(days=1)) is Status.SUPERSEDED
    assert [m.id for m in service.list_memories(current=True)[0]] == [replaced.id]


def test_a_key_of_an_expired_memory_is_taken_over(service: MemoryService) -> None:
    gone = service.add(
        "Office closed today", key="office", expires_at=utcnow() + timedelta(hours=1)
    )
    service.store.update_memory(  # the hour has passed
        service.tenant_id, [service.space_id], gone.id, {"expires_at": utcnow()}
    )
    assert service.get(gone.id).status is Status.EXPIRED
    fresh = service.add("Office open", key="office")
    assert fresh.status is Status.CURRENT
    assert service.get(gone.id).superseded_by == fresh.id
