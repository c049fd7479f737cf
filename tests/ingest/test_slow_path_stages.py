"""Message selection, the noise filter and admission control: the slow path's gates."""

from __future__ import annotations

import numpy as np
import pytest

from memoryd.embed.local import LocalEmbedder
from memoryd.ingest.admission import (
    CATEGORY_PRIORS,
    PRESETS,
    admit,
    composite,
    recency,
)
from memoryd.ingest.select import BYTE_BUDGET, MESSAGE_BUDGET, select_messages
from memoryd.models import Category
from memoryd.text.noise import MAX_LEARNED_NOISE, NoiseFilter, regex_noise

# ---------------------------------------------------------------------- selection


def test_selection_keeps_the_newest_twenty_in_order() -> None:
    messages = [("user" if i % 2 else "assistant", f"message {i}") for i in range(30)]
    chosen = select_messages(messages)
    assert len(chosen) == MESSAGE_BUDGET == 20
    assert chosen == messages[10:]


def test_selection_stops_at_the_byte_budget() -> None:
    big = "x" * 90_000
    messages = [("user", big), ("user", big), ("user", big), ("user", "last")]
    chosen = select_messages(messages)
    assert chosen == [("user", big), ("user", big), ("user", "last")]
    assert sum(len(c.encode()) for _, c in chosen) <= BYTE_BUDGET


def test_an_oversized_newest_message_is_cut_not_lost() -> None:
    huge = "我" * 100_000  # 300,000 bytes of UTF-8
    chosen = select_messages([("user", "older"), ("user", huge)])
    assert len(chosen) == 1
    text = chosen[0][1]
    assert len(text.encode()) <= BYTE_BUDGET and set(text) == {"我"}
    assert select_messages([]) == []


# ---------------------------------------------------------------------- noise


@pytest.mark.parametrize(
    ("text", "family"),
    [
        ("Hi!", "greeting"),
        ("good morning", "greeting"),
        ("你好！", "greeting"),
        ("Thanks a lot!", "thanks"),
        ("thank you for your help", "thanks"),
        ("谢谢你的帮助", "thanks"),
        ("ok", "acknowledgement"),
        ("好的。", "acknowledgement"),
        ("What can you do for me", "meta_question"),
        ("你是谁？", "meta_question"),
        ("I'm sorry, but I can't help with that.", "refusal"),
        ("As an AI language model, I have no preferences.", "refusal"),
        ("抱歉，我无法回答这个问题", "refusal"),
    ],
)
def test_regex_families_catch_chatter(text: str, family: str) -> None:
    assert regex_noise(text) == family


@pytest.mark.parametrize(
    "text",
    [
        "I prefer green tea over coffee",
        "Thanks to my sister I moved to Lisbon",
        "Hi-fi audio is my hobby",
        "我喜欢喝绿茶",
        "OK Computer is my favourite album",
    ],
)
def test_facts_are_not_chatter_by_their_words(text: str) -> None:
    assert regex_noise(text) is None


@pytest.fixture(scope="module")
def noise(embedder: LocalEmbedder) -> NoiseFilter:
    return NoiseFilter.build(embedder.embed)


def test_prototypes_catch_chatter_the_regexes_miss(
    noise: NoiseFilter, embedder: LocalEmbedder
) -> None:
    chatter = "Thank you, that was very helpful!!"
    assert regex_noise(chatter) is None
    assert noise.check(chatter, embedder.embed_one(chatter)) == "prototype"
    fact = "My daughter starts school in Porto next September"
    assert noise.check(fact, embedder.embed_one(fact)) is None
    assert noise.check("thanks", None) == "regex:thanks"
    assert noise.check(fact, None) is None


def test_learned_noise_is_matched_and_bounded(embedder: LocalEmbedder) -> None:
    marked = "The build bot posted its nightly status report"
    vectors = embedder.embed([marked])
    learned = NoiseFilter.build(embedder.embed, learned=vectors)
    similar = "the build bot posted its nightly status report"
    assert learned.check(similar, embedder.embed_one(similar)) == "learned"
    plain = NoiseFilter.build(embedder.embed)
    assert plain.check(similar, embedder.embed_one(similar)) is None
    many = np.repeat(vectors, MAX_LEARNED_NOISE + 50, axis=0)
    assert NoiseFilter.build(embedder.embed, learned=many).learned.shape[0] == MAX_LEARNED_NOISE


# ---------------------------------------------------------------------- admission


def test_composite_uses_the_seed_weights_and_priors() -> None:
    assert CATEGORY_PRIORS[Category.PROFILE] == 0.95
    assert CATEGORY_PRIORS[Category.EVENTS] == 0.45
    # 0.1·0.5 + 0.1·0.8 + 0.1·1.0 + 0.1·1.0 + 0.6·0.90
    assert composite(Category.PREFERENCES, 0.5, 0.8, 1.0) == pytest.approx(0.87)
    assert recency(0) == 1.0 and recency(30) == pytest.approx(0.5)


def test_balanced_preset_thresholds() -> None:
    assert PRESETS["balanced"].reject == 0.45 and PRESETS["balanced"].admit == 0.60
    assert admit(Category.PROFILE, 0.5, 0.7, 1.0).admitted
    low = admit(Category.EVENTS, 0.0, 0.0, 0.0, age_days=365)
    assert not low.admitted and low.score < 0.45 and "below" in low.reason
    # an event of middling value: the gray zone, decided by novelty
    gray_new = admit(Category.EVENTS, 0.3, 0.5, 0.9)
    gray_known = admit(Category.EVENTS, 0.3, 0.5, 0.1)
    assert 0.45 <= gray_new.score < 0.60 and gray_new.admitted
    assert 0.45 <= gray_known.score < 0.60 and not gray_known.admitted
    strict = admit(Category.EVENTS, 0.3, 0.5, 0.9, preset=PRESETS["strict"])
    assert not strict.admitted
