"""The stats overview in one pass: each group counts what counting by its column alone does."""

from __future__ import annotations

from memoryd.service import MemoryService
from memoryd.stats import OVERVIEW_GROUPS


def _seed(service: MemoryService) -> None:
    service.add("Coffee at 9 every morning", importance=0.8, tags=["food"])
    service.add("Met Sam at the conference", category="events")
    service.for_agent("agent-a").add(
        "The build cache lives in /var/cache/ci", scope="agent/agent-a"
    )
    service.ingest([{"role": "user", "content": "hello there, how are you"}], session_id="s1")
    archived = service.add("The old office was on Main Street")
    service.update(archived.id, state="archived")
    service.delete(service.add("A note to forget").id)


def test_the_overview_counts_what_each_column_counts_alone(service: MemoryService) -> None:
    _seed(service)
    stats = service.stats()
    spaces = [service.space_id]
    store = service.store
    for key, column in OVERVIEW_GROUPS.items():
        alone = store.count_by(service.tenant_id, spaces, column, deleted=column == "state")
        assert stats[key] == alone, key
    totals = store.totals(service.tenant_id, spaces)
    assert stats["total"] == totals["total"] == 5  # the deleted one counts in by_state only
    assert stats["by_state"] == {"active": 4, "archived": 1, "deleted": 1}
    assert stats["avg_importance"] == totals["avg_importance"]
    assert stats["avg_confidence"] == totals["avg_confidence"]
    assert stats["total_access_count"] == totals["total_access_count"]


def test_an_agent_overview_counts_only_what_it_may_see(service: MemoryService) -> None:
    _seed(service)
    for agent, hidden in (("agent-a", 0), ("agent-b", 1)):  # agent-a's own memory is private
        view = service.for_agent(agent)
        stats = view.stats()
        assert stats["total"] == 5 - hidden
        for key, column in OVERVIEW_GROUPS.items():
            alone = service.store.count_by(
                service.tenant_id, [service.space_id], column, column == "state", view.viewer
            )
            assert stats[key] == alone, (agent, key)


def test_an_empty_home_has_an_empty_overview(service: MemoryService) -> None:
    stats = service.stats()
    assert stats["total"] == 0 and stats["avg_importance"] == 0.0
    assert all(stats[key] == {} for key in OVERVIEW_GROUPS)
