from memoryd.service import MemoryService


def test_added_memory_is_found_first(service: MemoryService) -> None:
    berlin = service.add("I moved to Berlin in 2024")
    service.add("I prefer dark roast coffee in the morning")
    results = service.search("where does the user live").results
    assert results[0].memory.id == berlin.id
