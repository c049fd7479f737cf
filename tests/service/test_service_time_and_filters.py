"""Search over time (as_of, validity, expiry) and search filters."""

from __future__ import annotations

from datetime import timedelta

from memoryd.models import utcnow
from memoryd.service import MemoryService

BACKGROUND = [
    "I prefer dark roast coffee in the morning",
    "My sister lives in Lisbon",
    "I work as a nurse at the city hospital",
]


def _hits(service: MemoryService, query: str, **kw: object) -> list[str]:
    return [r.memory.id for r in service.search(query, touch=False, **kw).results]  # type: ignore[arg-type]


def test_as_of_finds_what_was_true_then(service: MemoryService) -> None:
    for text in BACKGROUND:
        service.add(text)
    now = utcnow()
    paris = service.add(
        "I lived in Paris for three years",
        valid_from=now - timedelta(days=900),
        valid_to=now - timedelta(days=10),
    ).id
    query = "which city did I live in, Paris"
    assert paris in _hits(service, query, as_of=now - timedelta(days=100))
    assert paris in _hits(service, query, as_of=now - timedelta(days=11))
    assert paris not in _hits(service, query)
    assert paris not in _hits(service, query, now=now)
    assert paris not in _hits(service, query, as_of=now - timedelta(days=5))
    assert paris not in _hits(service, query, as_of=now - timedelta(days=1000))  # not yet true
    # not found now, but never gone: get and list still have it
    assert service.get(paris).content == "I lived in Paris for three years"
    assert paris in [m.id for m in service.list_memories()[0]]


def test_expired_memories_are_not_returned(service: MemoryService) -> None:
    for text in BACKGROUND:
        service.add(text)
    now = utcnow()
    gone = service.add(
        "My temporary wifi password is banana42",
        valid_from=now - timedelta(days=1),
        expires_at=now,
    ).id
    later = service.add("The guest wifi password is mango77", expires_at=now + timedelta(days=1)).id
    assert gone not in _hits(service, "wifi password")
    assert gone not in _hits(service, "banana42")
    assert later in _hits(service, "wifi password")
    # when searching as of a time before it expired, it is there
    assert gone in _hits(service, "banana42", as_of=now - timedelta(seconds=1))
    # the clock of the search decides: a day on, the second one has expired too
    assert later not in _hits(service, "wifi password", now=now + timedelta(days=2))


def test_memory_valid_only_from_the_future_is_not_returned_now(service: MemoryService) -> None:
    for text in BACKGROUND:
        service.add(text)
    now = utcnow()
    job = service.add("I will start a new job at Google", valid_from=now + timedelta(days=30)).id
    assert service.get(job).is_live(now) is False
    assert job not in _hits(service, "new job at Google")
    assert job in _hits(service, "new job at Google", as_of=now + timedelta(days=31))


def test_search_filters(service: MemoryService) -> None:
    for text in BACKGROUND:
        service.add(text)
    work = service.add(
        "Team standup moved to 9:30 on Mondays",
        tags=["work", "meetings"],
        source="cli/claude",
        agent_id="claude",
        category="events",
    ).id
    home = service.add(
        "The book club meets on Mondays at 19:00",
        tags=["home", "meetings"],
        source="api",
        agent_id="cursor",
        category="events",
        memory_type="insight",
    ).id
    chat = service.ingest(
        [{"role": "user", "content": "Remind me: the dentist is on Monday at 8:00"}],
        session_id="s1",
        agent_id="claude",
        tags=["health"],
        source="cli/claude/session",
    ).memory_ids[0]
    query = "what is happening on Monday"
    assert _hits(service, query)[0] == work

    assert _hits(service, query, tags=["work"]) == [work]
    assert _hits(service, query, tags=["meetings", "home"]) == [home]  # all must match
    assert _hits(service, query, tags="home,meetings") == [home]
    assert _hits(service, query, tags=["work", "home"]) == []
    assert _hits(service, query, source="api") == [home]
    prefixed = set(_hits(service, query, source="cli/claude"))  # a prefix
    assert prefixed and prefixed <= {work, chat}
    assert _hits(service, query, source="cli/claude/session") == [chat]
    assert _hits(service, query, source="claude") == []  # a prefix, not a substring
    assert _hits(service, query, agent_id="cursor") == [home]
    by_agent = set(_hits(service, query, agent_id="claude"))
    assert by_agent and by_agent <= {work, chat}
    assert _hits(service, query, category="cases") == []
    by_category = set(_hits(service, query, category="events"))  # session turns are events
    assert by_category and by_category <= {work, home, chat}
    assert _hits(service, query, memory_type="insight") == [home]
    assert _hits(service, query, memory_type="session") == [chat]
    assert _hits(service, query, memory_type="pinned", tags=["meetings"]) == [work]
    assert _hits(service, query, created_after=utcnow()) == []
    assert _hits(service, query, created_before=utcnow() - timedelta(days=1)) == []
