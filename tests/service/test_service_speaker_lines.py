"""What a conversation turn's vector is made of."""

from __future__ import annotations

from memoryd.service import MemoryService
from memoryd.text.conversation import embedding_text, spoken


def test_generic_roles_leave_the_embedded_text_named_speakers_stay() -> None:
    assert spoken("user: hello there") == "hello there"
    assert spoken("Assistant: sure") == "sure"
    assert spoken("Caroline: I went to the support group") == (
        "Caroline: I went to the support group"
    )
    assert spoken("no speaker here") == "no speaker here"


def test_turn_vector_text_is_the_turn_then_its_context(service: MemoryService) -> None:
    result = service.ingest(
        [
            {"role": "assistant", "content": "How often do you swim?"},
            {"role": "user", "content": "Twice a week"},
        ],
        session_id="s1",
    )
    reply = service.get(result.memory_ids[1])
    assert reply.content == "user: Twice a week"
    assert reply.l1_overview == "assistant: How often do you swim?"
    assert embedding_text(reply) == "Twice a week\nHow often do you swim?"


def test_a_query_about_the_user_is_not_drawn_to_any_user_turn(service: MemoryService) -> None:
    berlin = service.add("I moved to Berlin in 2024")
    service.ingest([{"role": "user", "content": "hello there"}], session_id="s1")
    results = service.search("where does the user live", touch=False).results
    assert results[0].memory.id == berlin.id
