"""Which conversation turns carry nothing to remember (kept, but ranked last)."""

from __future__ import annotations

import pytest

from memoryd.text.noise import says_nothing


@pytest.mark.parametrize(
    ("role", "text"),
    [
        ("assistant", "Big change!"),
        ("assistant", "Nice."),
        ("assistant", "杭州很美！"),
        ("assistant", "Congratulations on the new role!"),
        ("assistant", "I'm sorry to hear that."),
        ("assistant", "明白了。"),
        ("user", "Haha nice"),
        ("user", "Ok cool"),
        ("user", "thanks!"),
        ("Caroline", "Thanks!"),
    ],
)
def test_chatter_and_reactions_say_nothing(role: str, text: str) -> None:
    assert says_nothing(role, text)


@pytest.mark.parametrize(
    ("role", "text"),
    [
        ("user", "I moved to Oslo!"),  # the user's short news is news
        ("Gina", "It's Shia Labeouf!"),  # so is a person's, in a conversation between people
        ("assistant", "Paris is lovely in spring, you should visit the Louvre."),
        ("assistant", "在北京。"),
        ("assistant", "How is it going so far?"),
        ("assistant", "You have 3 meetings today!"),
    ],
)
def test_content_is_not_chatter(role: str, text: str) -> None:
    assert not says_nothing(role, text)
