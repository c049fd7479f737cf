"""Noticing "remember this" (seed 000 §3.2 keywords, English and Chinese)."""

from __future__ import annotations

import pytest

from memoryd.text.remember import (
    KEYWORDS_EN,
    KEYWORDS_ZH,
    has_keyword,
    memory_key,
    remember_request,
)


@pytest.mark.parametrize("keyword", [*KEYWORDS_EN, *KEYWORDS_ZH])
def test_every_seed_keyword_is_noticed(keyword: str) -> None:
    assert has_keyword(f"好的 {keyword} something" if keyword.isascii() else f"请{keyword}这件事")


@pytest.mark.parametrize(
    ("prompt", "facts", "bare"),
    [
        (
            "Remember that I use Python 3.11 everywhere. Now fix the parser.",
            ["Remember that I use Python 3.11 everywhere."],
            False,
        ),
        (
            "Don’t forget: staging runs on port 8443",
            ["Don’t forget: staging runs on port 8443"],
            False,
        ),
        (
            "Please memorise that Ana owns billing!",
            ["Please memorise that Ana owns billing!"],
            False,
        ),
        ("记住我喜欢用 vim。然后修复这个问题", ["记住我喜欢用 vim。"], False),
        ("别忘了周五要发布新版本", ["别忘了周五要发布新版本"], False),
        ("Remember this.", [], True),
        ("记一下这个", [], True),
    ],
)
def test_what_is_kept(prompt: str, facts: list[str], bare: bool) -> None:
    request = remember_request(prompt)
    assert request is not None
    assert request.facts == facts
    assert request.bare is bare


@pytest.mark.parametrize(
    "prompt",
    [
        "Do you remember which port staging uses?",
        "你还记得吗？",
        "Please fix the failing test in parser.py",
        "I remembered to run the linter",  # not the keyword: a past tense
        "",
    ],
)
def test_questions_and_other_prompts_keep_nothing(prompt: str) -> None:
    assert remember_request(prompt) is None


def test_one_slot_per_fact_whatever_the_spacing_and_case() -> None:
    assert memory_key("Remember  that I use FISH") == memory_key("remember that i use fish")
    assert memory_key("a") != memory_key("b")
