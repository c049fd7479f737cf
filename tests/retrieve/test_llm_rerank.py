"""Stage 6 with the LLM as the reranker, against the scripted OpenAI-compatible server.

The scripted answers stand in for a model's judgement: these tests check
the plumbing (one call a search, the prompt, the blend, the order it
gives) and that a model that fails or miscounts changes nothing.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from memoryd.config import load_settings
from memoryd.embed.local import LocalEmbedder
from memoryd.errors import ValidationError
from memoryd.prompts.rerank import RERANK_DOCUMENT_CHARS, rerank_prompt
from memoryd.service import MemoryService

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "llm"))
from scripted_llm import Recorded, Reply, ScriptedLLM

NOTES = [
    "The user drinks green tea every morning",
    "The user's favourite tea shop is in Kyoto",
    "The user stopped drinking coffee in 2023",
    "The user's sister runs a bakery",
]
QUERY = "which beverage does the user enjoy"  # no word of it in the notes: no BM25 floor


def shown(request: Recorded) -> list[str]:
    """The results the prompt showed, in order."""
    return re.findall(r"^\[\d+\] (.*)$", request.messages[-1]["content"], re.MULTILINE)


def favour(word: str) -> object:
    """A model that gives 10 to each result holding ``word`` and 0 to the others."""

    def answer(request: Recorded) -> str:
        return json.dumps({"scores": [10 if word in r else 0 for r in shown(request)]})

    return answer


def service_with(home: Path, embedder: LocalEmbedder, llm: ScriptedLLM) -> MemoryService:
    settings = load_settings(
        home, rerank_provider="llm", llm_base_url=llm.url, llm_model="scripted"
    )
    svc = MemoryService(settings=settings, embedder=embedder)
    for note in NOTES:
        svc.add(note)
    return svc


def ranking(svc: MemoryService) -> list[str]:
    return [r.memory.content for r in svc.search(QUERY, limit=4, touch=False).results]


def test_the_models_scores_reorder_the_results(tmp_path: Path, embedder: LocalEmbedder) -> None:
    with ScriptedLLM(responder=favour("Kyoto")) as llm:  # type: ignore[arg-type]
        svc = service_with(tmp_path, embedder, llm)
        try:
            results = ranking(svc)
        finally:
            svc.close()
        assert results[0] == "The user's favourite tea shop is in Kyoto"
        assert len(llm.chat_requests) == 1  # one call for every candidate
        prompt = llm.chat_requests[0].messages[-1]["content"]
        assert prompt.startswith(f"QUERY: {QUERY}")
        # every candidate but the sister's fact: hers, under the floor for a question about
        # the user (subject_match)
        assert set(shown(llm.chat_requests[0])) == set(NOTES[:3])


@pytest.mark.parametrize(
    "reply",
    [Reply(status=500), Reply(content='{"scores": [10]}'), Reply(content="no json at all")],
    ids=["server error", "too few scores", "no json"],
)
def test_a_failing_or_miscounting_model_leaves_the_order(
    tmp_path: Path, embedder: LocalEmbedder, reply: Reply
) -> None:
    plain = MemoryService(tmp_path / "plain", embedder=embedder)
    for note in NOTES:
        plain.add(note)
    expected = ranking(plain)
    plain.close()
    with ScriptedLLM(responder=lambda _: reply) as llm:
        svc = service_with(tmp_path / "reranked", embedder, llm)
        try:
            assert ranking(svc) == expected
        finally:
            svc.close()
        assert llm.chat_requests  # it was asked


def test_llm_rerank_without_an_llm_is_a_clear_error(
    tmp_path: Path, embedder: LocalEmbedder
) -> None:
    svc = MemoryService(settings=load_settings(tmp_path, rerank_provider="llm"), embedder=embedder)
    try:
        with pytest.raises(ValidationError, match="MEMORYD_LLM_BASE_URL"):
            svc.search(QUERY)
    finally:
        svc.close()


def test_the_prompt_numbers_each_result_and_cuts_long_ones() -> None:
    prompt = rerank_prompt("q", ["short one", "word " * 500])
    lines = prompt.splitlines()
    assert lines[:3] == ["QUERY: q", "RESULTS:", "[0] short one"]
    assert lines[3].startswith("[1] word word") and lines[3].endswith(" …")
    assert len(lines[3]) <= RERANK_DOCUMENT_CHARS + len("[1] ") + 2
